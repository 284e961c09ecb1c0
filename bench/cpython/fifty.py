"""50 threads three Python calls deep in time.sleep, for bench/cpython.sh:
`fifty.py crash` then crashes (ctypes.string_at(0)) in the main thread,
`fifty.py park` sleeps there too; `fifty.py asyncio [OBJECTS]` runs an
asyncio loop in the main thread instead, with 100 pending tasks (each a
few coroutines deep in a sleep, an event or a queue) over a heap of OBJECTS
(default 200,000) objects the collector tracks, and prints how many it
tracks once every task waits."""
import asyncio
import ctypes
import gc
import sys
import threading
import time


def a():
    time.sleep(600)


def b():
    a()


def c():
    b()


async def leaf(kind, ev, q):
    if kind == 0:
        await asyncio.sleep(600)
    elif kind == 1:
        await ev.wait()
    else:
        await q.get()


async def mid(kind, ev, q):
    await leaf(kind, ev, q)


async def tasks(objects):
    heap = [{"id": i, "tags": [i, str(i)]} for i in range(objects // 3)]
    ev, q = asyncio.Event(), asyncio.Queue()
    pending = [asyncio.create_task(mid(i % 3, ev, q), name="t%d" % i) for i in range(100)]
    await asyncio.sleep(0.1)
    print("tracked %d" % len(gc.get_objects()), flush=True)
    await asyncio.gather(*pending)
    return heap


def main():
    started = threading.Barrier(50)

    def run():
        started.wait()
        c()

    for _ in range(49):
        threading.Thread(target=run, daemon=True).start()
    started.wait()
    if sys.argv[1:2] == ["crash"]:
        ctypes.string_at(0)     # the others in time.sleep or still leaving the barrier
    if sys.argv[1:2] == ["asyncio"]:
        asyncio.run(tasks(int(sys.argv[2]) if sys.argv[2:] else 200000))
    c()


main()
