#!/bin/sh
# The libFuzzer harnesses of tests/fuzz/, each for a few seconds from its
# seed corpus: a crash, a sanitizer report, an input that takes more than
# ten seconds or a broken invariant fails the test, and the input that did
# it is shown in base64. SKIP when configure found no C compiler with
# libFuzzer. FASGD_FUZZ_SECONDS scales every run (default 1: about 40 s in all).
tap_name=fuzz
. "${FASGD_TOP_SRCDIR:-.}/tests/tap.sh"
bindir="$top_build/tests/fuzz"
if [ ! -x "$bindir/fuzz_header" ]; then
    echo "1..0 # SKIP no C compiler with libFuzzer (configure with FUZZ_CC=clang; Debian: clang libclang-rt-14-dev)"
    exit 0
fi
scale=${FASGD_FUZZ_SECONDS:-1}
set -- header:3 desc:5 tensors:3 config:12 idx:10 checkpoint:4
echo "1..$#"
for item in "$@"; do
    name=${item%%:*} seconds=$((${item#*:} * scale))
    if sh "$top_src/tests/fuzz/run.sh" check "$bindir" "$top_src/tests/fuzz/corpus" "$tmp" "$seconds" "$name" > "$tmp/out" 2>&1; then
        ok "fuzz_$name: $(head -1 "$tmp/out")"
    else
        not_ok "fuzz_$name"
        for f in "$tmp/crash-$name-"*; do
            [ -f "$f" ] && echo "# input $(basename "$f"), base64: $(base64 -w0 "$f" | cut -c1-2000)"
        done
    fi
done
[ $failed -eq 0 ]
