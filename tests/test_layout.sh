#!/bin/sh
# The server's layers as server/internal.h maps them: every file of
# server/ in the map, the map's arrows exactly the calls between the
# files, and no call circle (tests/check_layout.py). Reports TAP.
tap_name=layout
. "${FASGD_TOP_SRCDIR:-.}/tests/tap.sh"
echo "1..2"
if [ ! -x "$python" ]; then
    echo "ok 1 # SKIP no $python"; echo "ok 2 # SKIP no $python"; exit 0
fi
check "the file map of server/ is whole and true, without a call circle" \
    sh -c "'$python' '$top_src/tests/check_layout.py' '$top_src' > '$tmp/out' 2>&1"
# The checker itself: a file it has never seen and a call up the layers
# must each make it fail.
mkdir -p "$tmp/tree/server"
cp "$top_src"/server/*.c "$top_src"/server/*.h "$tmp/tree/server/"
printf 'int fasgd_srv_unmapped_x (void) { return 0; }\n' > "$tmp/tree/server/unmapped.c"
printf '\nvoid fasgd_srv_up_x (void);\nvoid\nfasgd_srv_up_x (void) { fasgd_srv_dispatch (0, 0, 0); }\n' \
    >> "$tmp/tree/server/reply.c"
"$python" "$top_src/tests/check_layout.py" "$tmp/tree" > "$tmp/out" 2>&1
check "an unmapped file and a call up into the router are both found" \
    sh -c "grep -q 'server/unmapped.c is missing' '$tmp/out' && grep -q 'reply.c calls into dispatch.c' '$tmp/out' \
           && grep -q 'call circle' '$tmp/out'"
exit $((failed > 0))
