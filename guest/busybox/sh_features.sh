# busybox sh language features (run as: busybox sh sh_features.sh).
# Functions, local variables, loops, arithmetic, here-documents,
# pipelines, subshells, command substitution, case, parameter expansion,
# traps, exit statuses, read loops, set -e/-u behaviour in subshells.
# Deterministic output; works in a temporary directory it removes.
T=$(mktemp -d "${TMPDIR:-/tmp}/bbsh.XXXXXX") || exit 1
trap 'cd /; rm -rf "$T"' EXIT
cd "$T" || exit 1

echo "== functions"
fact() {
    if [ "$1" -le 1 ]; then echo 1; return; fi
    local sub
    sub=$(fact $(($1 - 1)))
    echo $(($1 * sub))
}
echo "fact 10 = $(fact 10)"
counter=0
bump() { counter=$((counter + $1)); return $(($1 % 3)); }
bump 5; echo "bump 5 -> counter=$counter status=$?"
bump 6; echo "bump 6 -> status=$?"
scope() { local x=inner; echo "in: $x"; }
x=outer; scope; echo "out: $x"

echo "== loops"
i=0; s=0
while [ $i -lt 100 ]; do i=$((i + 1)); s=$((s + i * i)); done
echo "sum of squares 1..100 = $s"
for w in alpha beta "gamma delta" epsilon; do printf '[%s]' "$w"; done; echo
n=0; until [ $n -ge 5 ]; do n=$((n + 1)); [ $n -eq 3 ] && continue; printf '%d ' $n; done; echo
for i in 1 2 3; do for j in a b c; do [ $j = c ] && break; [ $i = 2 ] && continue 2; printf '%s%s ' $i $j; done; done; echo

echo "== arithmetic"
echo $((7 / 2)) $((-7 / 2)) $((7 % 3)) $((-7 % 3)) $((2 ** 10)) $((1 << 40)) $((0x1f)) $((010)) $((~5)) $((5 ^ 3))
echo $((9223372036854775807 + 1)) $(( (3 > 2) && (2 > 3) )) $(( 4 > 3 ? 10 : 20 ))
a=5; a=$((a += 3)); b=$((a++)); echo "a=$a b=$b"

echo "== parameter expansion"
p=/usr/local/lib/libfoo.so.1.2
echo "${p##*/} ${p%/*} ${p#*/} ${p%%.*} ${#p}"
unset u; echo "${u:-default} ${u-unset} [${u:+alt}]"; v=val; echo "${v:+alt} ${v:-x}"
str="Hello World"; echo "${str:6} ${str:0:5}"
set -- one "two three" four
echo "argc=$# first=$1 all=$* last=${3}"
for arg in "$@"; do printf '<%s>' "$arg"; done; echo
shift 2; echo "after shift: $# $1"

echo "== here-documents"
name=world
cat <<END
Hello, $name! $((6 * 7))
  indented line
END
cat <<'RAW'
No $expansion here: $(echo nope)
RAW
cat <<-TABS
	leading tabs stripped
	TABS
while read -r k v; do echo "key=$k value=$v"; done <<EOF2
a 1
b two words
c
EOF2

echo "== pipelines and exit status"
echo "abc" | tr a-z A-Z | cat
false | true; echo "false|true -> $?"
true | false; echo "true|false -> $?"
! true; echo "! true -> $?"
(exit 7); echo "subshell exit -> $?"
sh -c 'exit 3'; echo "sh -c exit 3 -> $?"
missing_command_xyz 2>/dev/null; echo "missing command -> $?"

echo "== subshells and command substitution"
outer=1
(outer=2; echo "in subshell: $outer")
echo "after subshell: $outer"
{ outer=3; echo "in group: $outer"; }
echo "after group: $outer"
nested=$(echo "a$(echo "b$(echo c)")")
echo "nested: $nested"
lines=$(printf 'x\ny\nz\n'); echo "lines: $lines" | wc -l
old=`echo backticks`; echo "$old"
echo "$(cd /; pwd) and still in temp: $([ "$PWD" = "$T" ] && echo yes)"

echo "== case"
for f in file.txt image.PNG archive.tar.gz noext ""; do
    case "$f" in
        *.txt) kind=text ;;
        *.[Pp][Nn][Gg]) kind=image ;;
        *.tar.*) kind=tarball ;;
        "") kind=empty ;;
        *) kind=unknown ;;
    esac
    echo "'$f' -> $kind"
done

echo "== redirections"
echo first > out.txt
echo second >> out.txt
cat < out.txt
echo to-stderr 1>&2 2>/dev/null
{ echo grouped1; echo grouped2; } > grp.txt; wc -l < grp.txt
exec 3> fd3.txt; echo via-fd3 >&3; exec 3>&-; cat fd3.txt
echo "noclobber:"; set -C; (echo x > out.txt) 2>/dev/null || echo "refused"; set +C

echo "== traps and errexit"
( trap 'echo "subshell EXIT trap"' EXIT; echo "in trap subshell" )
( set -e; echo before; false; echo "not printed" ); echo "set -e subshell -> $?"
( set -u; echo "${undefined_var}" ) 2>/dev/null; echo "set -u subshell -> $?"
f() { return 4; }; f || echo "f failed with $?"
test -d . && test ! -f nonexist && [ "a" != "b" ] && [ -z "" ] && [ -n "x" ] && echo "tests ok"
[ 10 -gt 9 ] && [ "10" \< "9" ] && echo "numeric vs string compare ok"
printf '%5s|%-5s|%05d|%x|%o|%c|%s\n' ab cd 42 255 8 xyz "multi word"
printf '%s\n' "done"
exit 0
