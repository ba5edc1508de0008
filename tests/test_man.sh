#!/bin/sh
# The manual pages as built: every page lints clean and renders; every
# program's page documents exactly the options of its --help (in its
# OPTIONS section); fasgd.yaml(5) documents every key of --keys. Reports TAP.
tap_name=man
. "${FASGD_TOP_SRCDIR:-.}/tests/tap.sh"
mandir="$top_build/man"
LC_ALL=C; export LC_ALL

# A program (its path in the build tree, else in the source tree) and the
# page that documents its options: one pair a line. scripts/fasgd-plot is
# made from scripts/fasgd-plot.in, so it exists in the build tree only.
option_pages='
server/fasgd-server     fasgd-server.8
client/fasgd-client     fasgd-client.1
sim/fasgd-sim           fasgd-sim.1
ctl/fasgd-ctl        fasgd-ctl.1
scripts/fasgd-plot      fasgd-plot.1
scripts/testbed         fasgd-testbed.1
'
# Programs whose every --keys key fasgd.yaml.5 documents.
key_programs='server/fasgd-server sim/fasgd-sim'
# Pages the build must have made; any other page in man/ is checked too.
required_pages='fasgd-server.8 fasgd-client.1 fasgd-sim.1 fasgd-ctl.1 fasgd-plot.1 fasgd.yaml.5 fasgd.7
                fasgd_client.3 fasgd-testbed.1'

bs=$(printf '\b')

have() { command -v "$1" > /dev/null 2>&1; }

# The page as plain text, 80 columns, without overstriking.
render() {
    if have mandoc; then
        mandoc -T ascii -O width=80 "$1"
    else
        groff -mandoc -Tascii -P-c -rLL=80n "$1" 2> /dev/null
    fi | sed "s/.$bs//g"
}

# The lines of section $1 (a heading at column 0) of rendered text on stdin.
section() {
    awk -v want="$1" '/^[^ ]/ { on = ($0 == want); next } on'
}

# Option names from the option lines on stdin: lines indented by at most 8
# spaces that start with '-', whose option column (up to the first two
# spaces) lists names separated by ", ", each perhaps followed by an
# argument. "  -c, --config FILE   text" gives -c and --config.
option_names() {
    awk '{
        if (!match ($0, /^ +-/) || RLENGTH > 9)
            next
        col = substr ($0, RLENGTH)
        if ((i = index (col, "  ")) > 0)
            col = substr (col, 1, i - 1)
        k = split (col, alt, ", ")
        for (j = 1; j <= k; j++) {
            split (alt [j], word, " ")
            name = word [1]
            sub (/\[?=.*/, "", name)
            if (name ~ /^--?[A-Za-z0-9]/)
                print name
        }
    }' | sort -u
}

find_program() {
    if [ -f "$top_build/$1" ] && [ -x "$top_build/$1" ]; then echo "$top_build/$1"
    elif [ -f "$top_src/$1" ] && [ -x "$top_src/$1" ]; then echo "$top_src/$1"
    else return 1
    fi
}

# Every page is built.
for page in $required_pages; do
    if [ -s "$mandir/$page" ]; then ok "$page is built"
    else echo "no $mandir/$page" > "$tmp/err"; not_ok "$page is built"
    fi
done

# Every page lints without a warning and renders.
for path in "$mandir"/*.[1-9]; do
    [ -f "$path" ] || continue
    page=$(basename "$path")
    if have mandoc; then
        linter="mandoc -T lint -W warning"
        mandoc -T lint -W warning "$path" > "$tmp/err" 2>&1
    else
        linter="groff -ww -z -mandoc"
        groff -ww -z -mandoc "$path" > "$tmp/err" 2>&1
    fi
    rc=$?
    if [ $rc -eq 0 ] && [ ! -s "$tmp/err" ]; then ok "$page: $linter is silent"
    else not_ok "$page: $linter is silent (exit $rc)"
    fi

    if have man; then
        viewer="man -l"
        MANPAGER=cat PAGER=cat MANWIDTH=80 man -l "$path" > "$tmp/out" 2> "$tmp/err"
    elif have mandoc; then
        viewer="mandoc -T ascii"
        mandoc -T ascii "$path" > "$tmp/out" 2> "$tmp/err"
    else
        viewer="groff -mandoc -Tascii"
        groff -mandoc -Tascii "$path" > "$tmp/out" 2> "$tmp/err"
    fi
    rc=$?
    if [ $rc -eq 0 ] && sed "s/.$bs//g" "$tmp/out" | grep -q '^NAME'; then ok "$page: $viewer renders it"
    else not_ok "$page: $viewer renders it (exit $rc)"
    fi
done

# Each program's page has exactly the options of its --help in OPTIONS.
echo "$option_pages" | while read -r prog page; do
    [ -n "$prog" ] || continue
    echo "$prog $page"
done > "$tmp/pairs"
while read -r prog page; do
    name=$(basename "$prog")
    if ! bin=$(find_program "$prog"); then
        echo "$prog is neither in $top_build nor in $top_src" > "$tmp/err"
        not_ok "$page documents the options of $name --help"
        continue
    fi
    if ! "$bin" --help > "$tmp/help" 2> "$tmp/err"; then
        not_ok "$page documents the options of $name --help ($name --help failed)"
        continue
    fi
    option_names < "$tmp/help" > "$tmp/help-opts"
    render "$mandir/$page" | section OPTIONS | option_names > "$tmp/page-opts"
    comm -23 "$tmp/help-opts" "$tmp/page-opts" | sed 's/^/missing from the page: /' > "$tmp/err"
    comm -13 "$tmp/help-opts" "$tmp/page-opts" | sed 's/^/not in --help: /' >> "$tmp/err"
    if [ -s "$tmp/help-opts" ] && [ ! -s "$tmp/err" ]; then
        ok "$page documents the $(wc -l < "$tmp/help-opts") options of $name --help in OPTIONS"
    else
        [ -s "$tmp/help-opts" ] || echo "no options found in $name --help" >> "$tmp/err"
        not_ok "$page documents the options of $name --help in OPTIONS"
    fi
done < "$tmp/pairs"

# fasgd.yaml.5 has an entry (a line that starts with the key, then nothing
# or its type in parentheses) for every key of every program's --keys.
render "$mandir/fasgd.yaml.5" > "$tmp/yaml5"
for prog in $key_programs; do
    name=$(basename "$prog")
    if ! bin=$(find_program "$prog") || ! "$bin" --keys > "$tmp/keys" 2> "$tmp/err"; then
        echo "cannot run $prog --keys" >> "$tmp/err"
        not_ok "fasgd.yaml.5 documents every key of $name --keys"
        continue
    fi
    awk '/^  [^ ]/ { print $1 }' "$tmp/keys" > "$tmp/key-names"
    : > "$tmp/err"
    while read -r key; do
        awk -v k="$key" '$1 == k && (NF == 1 || $2 ~ /^\(/) { found = 1 } END { exit !found }' "$tmp/yaml5" \
            || echo "missing from fasgd.yaml.5: $key" >> "$tmp/err"
    done < "$tmp/key-names"
    if [ -s "$tmp/key-names" ] && [ ! -s "$tmp/err" ]; then
        ok "fasgd.yaml.5 documents the $(wc -l < "$tmp/key-names") keys of $name --keys"
    else
        [ -s "$tmp/key-names" ] || echo "no keys found in $name --keys" >> "$tmp/err"
        not_ok "fasgd.yaml.5 documents every key of $name --keys"
    fi
done

echo "1..$n"
[ $failed -eq 0 ]
