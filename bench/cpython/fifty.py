"""50 threads three Python calls deep in time.sleep, for bench/cpython.sh:
`fifty.py crash` then crashes (ctypes.string_at(0)) in the main thread,
`fifty.py park` sleeps there too."""
import ctypes
import sys
import threading
import time


def a():
    time.sleep(600)


def b():
    a()


def c():
    b()


def main():
    started = threading.Barrier(50)

    def run():
        started.wait()
        c()

    for _ in range(49):
        threading.Thread(target=run, daemon=True).start()
    started.wait()
    if sys.argv[1:] == ["crash"]:
        ctypes.string_at(0)     # the others in time.sleep or still leaving the barrier
    c()


main()
