# What the CPython test scripts share.  Sourced after lib.sh.

# interleaved REPORT: the crashing thread's script frames among its
# _PyEval_EvalFrameDefault frames, innermost first (the form of
# fixtures/cpython/expect/*.runtime).
interleaved() {
	python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
t = [t for t in j["threads"] if t["crashing"]][0]
for f in t["frames"]:
    if f["kind"] == "script":
        print("script", f["function"])
    elif (f.get("function") or "").startswith("_PyEval_EvalFrameDefault"):
        print("native _PyEval_EvalFrameDefault")' "$1"
}

# checkout_asyncore DIR: a copy of $ASYNCORE as DIR/asyncore of a checkout,
# so that it finds this one's share/asyncore/runtimes wherever it was built
# (build/asan/asyncore); prints its path.
checkout_asyncore() {
	mkdir -p "$1" && cp "$ASYNCORE" "$1/asyncore" && ln -sfn "$ROOT/share" "$1/share" && echo "$1/asyncore"
}
