# What the browser test scripts share (tests/t_html.sh, tests/t_serve.sh):
# headless Chromium loading a page into a DOM dump or screenshots.  Sourced
# after lib.sh; the script installs chromium itself (test_dep).

# browser OUT ARGS... URL: headless Chromium with a private profile and no
# network of its own; stdout into OUT, stderr into OUT.err.
browser() {
	local out=$1; shift
	local profile; profile=$(mktemp -d)
	timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--user-data-dir="$profile" "$@" >"$out" 2>"$out.err"
	local rc=$?
	rm -rf "$profile"
	return $rc
}

# screenshots TEST NAME URL: URL at 1280x900 and 390x844 into
# $TMPD/NAME-WIDTH.png, each checked (as "TEST: NAME screenshot ...") to
# have more than a few colours and no colour covering nearly all of it.
screenshots() {
	local test=$1 name=$2 url=$3 size
	for size in 1280,900 390,844; do
		local png=$TMPD/$name-${size%,*}.png
		browser "$TMPD/shot.out" --screenshot="$png" --window-size=$size "$url"
		read -r w h colours dominant < <(python3 "$ROOT/tests/png_colors.py" "$png" 2>/dev/null)
		check "$test: $name screenshot at ${size/,/x} is not blank ($colours colours, ${dominant}% one colour)" \
			test "${w}x$h" = "${size/,/x}" -a "${colours:-0}" -gt 20 -a "${dominant:-100}" -lt 95
	done
}
