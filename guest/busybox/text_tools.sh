# busybox text-processing applets (run as: busybox sh text_tools.sh).
# sort, uniq, awk, sed, grep, wc, cut, tr, head, tail, xargs, seq, paste,
# nl, rev, fold, expand, od, expr on generated data.  xargs only runs
# NOFORK applets (echo, printf): see archive_hash.sh for why.
# Deterministic output; works in a temporary directory it removes.
T=$(mktemp -d "${TMPDIR:-/tmp}/bbtext.XXXXXX") || exit 1
trap 'cd /; rm -rf "$T"' EXIT
cd "$T" || exit 1

# Generate a word list with a small LCG in awk (integers stay exact).
awk 'BEGIN {
    x = 12345
    split("apple banana cherry date elderberry fig grape honeydew kiwi lemon mango nectarine", w, " ")
    for (i = 1; i <= 500; i++) {
        x = (x * 75 + 74) % 65537
        printf "%s %d %d\n", w[(x % 12) + 1], x % 1000, i
    }
}' > data.txt

echo "== wc"
wc -l < data.txt
wc -w < data.txt
wc -c < data.txt

echo "== sort"
sort data.txt | head -n 3
sort -k2,2n -k3,3n data.txt | head -n 3
sort -k2,2nr data.txt | head -n 3
sort -t ' ' -k1,1 -u data.txt | cut -d ' ' -f1 | tr '\n' ' '; echo
cut -d ' ' -f2 data.txt | sort -n | tail -n 1
printf 'b\nA\na\nB\n' | sort
printf 'b\nA\na\nB\n' | sort -f
printf '10\n9\n100\n-1\n' | sort -n | tr '\n' ' '; echo

echo "== uniq"
cut -d ' ' -f1 data.txt | sort | uniq -c | sort -k1,1nr -k2 | head -n 5
cut -d ' ' -f1 data.txt | sort | uniq -d | wc -l
printf 'a\na\nb\nc\nc\nc\n' | uniq -u

echo "== awk"
awk '{ s[$1] += $2; n[$1]++ } END { for (k in s) printf "%s %d %.2f\n", k, s[k], s[k] / n[k] }' data.txt | sort
awk 'NR % 100 == 0 { print NR, $0 }' data.txt
awk -F' ' '$2 > 990 { c++ } END { print "over 990:", c + 0 }' data.txt
awk 'BEGIN { printf "%d %s %5.3f %x %c|\n", 42, "str", 3.14159, 255, 65; print length("hello"), substr("abcdef", 2, 3), index("hello", "ll"), toupper("mixed Case") }'
awk 'BEGIN { s = "a,b,,c"; n = split(s, parts, ","); print n, parts[1] parts[4]; t = "education"; print gsub(/[aeiou]/, "#", t), t; x = "banana"; print sub(/an/, "AN", x), x; print int(-3.7), 7 % 3, 2147483648 * 2 }'
echo "one two three" | awk '{ for (i = NF; i > 0; i--) printf "%s%s", $i, (i > 1 ? " " : "\n") }'

echo "== sed"
sed -n '1,3p' data.txt
sed -n '/^kiwi/{p;q;}' data.txt
sed 's/\([a-z]*\) \([0-9]*\) \([0-9]*\)/\3:\1/' data.txt | head -n 3
sed -e 's/a/A/g' -e '2d' -e '4q' data.txt
printf 'line1\nline2\nline3\n' | sed '2i\
inserted' | sed '$a\
appended'
printf 'hello world\n' | sed 'y/lo/01/'
sed -n '$=' data.txt

echo "== grep"
grep -c '^apple' data.txt
grep -n 'fig 9' data.txt | head -n 3
grep -v -c 'a' data.txt
grep -E '^(kiwi|lemon) [0-9]{3} ' data.txt | head -n 3
grep -o '[0-9]*$' data.txt | head -n 3 | tr '\n' ' '; echo
grep -i 'MANGO' data.txt | wc -l
grep -w 'date' data.txt | head -n 1
grep -q nonexistent data.txt; echo "grep -q miss -> $?"
grep -l apple data.txt missing.txt 2>/dev/null; echo "grep -l -> $?"

echo "== cut, tr, paste"
cut -c1-5 data.txt | head -n 3
cut -d ' ' -f 2- data.txt | head -n 2
echo "Hello, World 123" | tr 'a-z' 'A-Z'
echo "Hello, World 123" | tr -d 'lo '
echo "aaabbbcccdd" | tr -s 'a-c'
echo "abc" | tr -c 'a' 'x'; echo
seq 1 5 > n1.txt; seq 6 10 > n2.txt
paste n1.txt n2.txt | tr '\t' ','
paste -s -d+ n1.txt

echo "== head, tail"
head -n 2 data.txt
tail -n 2 data.txt
head -c 20 data.txt; echo
tail -n +499 data.txt
seq 1 100 | tail -n 3 | head -n 1

echo "== xargs, seq, misc"
seq 1 10 | xargs echo
seq 1 10 | xargs -n 3 echo
printf 'a b\nc\n' | xargs -I{} echo "[{}]"
printf 'x y\nz\n' | xargs printf '<%s>'; echo
seq 5 -2 -5 | tr '\n' ' '; echo
seq -w 8 11 | tr '\n' ' '; echo
printf 'x\ny\nz\n' | nl | tr '\t' ' '
echo "stressed" | rev
echo "abcdefghijklmnopqrstuvwxyz" | fold -w 10
printf 'a\tb\n' | expand -t 4
printf 'ABC\n' | od -c | head -n 1
echo "basename: $(basename /a/b/c.txt .txt) dirname: $(dirname /a/b/c.txt)"
expr 3 \* 4 + 2; expr length "hello"; expr "abc123" : '[a-z]*'
