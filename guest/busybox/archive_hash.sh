# busybox archive, checksum and file-tree applets (run as:
# busybox sh archive_hash.sh).  md5sum/sha1sum/sha256sum/sha512sum of
# generated files, gzip round trips (gzip -c | gzip -dc | md5sum, gzip -9,
# gunzip, zcat, gzip -t), tar create+extract round trips (plain, gzip,
# through a pipe), find on a generated tree (sorted), cp -r/mv/ln/rm -r/
# mkdir -p, cmp, diff, stat, dd.
# Applets are only started from the shell (not through find -exec or
# xargs): under qemu-user without binfmt_misc, busybox's re-exec of
# /proc/self/exe from other applets falls back to the host /bin/sh.
# Deterministic output; works in a temporary directory it removes.
T=$(mktemp -d "${TMPDIR:-/tmp}/bbarch.XXXXXX") || exit 1
trap 'cd /; rm -rf "$T"' EXIT
cd "$T" || exit 1

# A 300 KB pseudo-random-ish file generated with awk and a compressible one.
awk 'BEGIN { x = 1; for (i = 0; i < 20000; i++) { x = (x * 75 + 74) % 65537; printf "%05d%c%08x\n", x, 65 + x % 26, x * 40503 % 4294967296 } }' > gen.bin
seq 1 20000 > seq.txt

echo "== sizes"
wc -c < gen.bin
wc -c < seq.txt

echo "== checksums"
md5sum gen.bin seq.txt
sha1sum gen.bin
sha256sum gen.bin seq.txt
sha512sum seq.txt | cut -c1-64
md5sum gen.bin > sums.md5
md5sum -c sums.md5
printf '' | md5sum
echo -n "abc" | sha256sum

echo "== gzip round trip"
gzip -c < gen.bin | gzip -dc | md5sum
gzip -c < seq.txt | wc -c
gzip -9 -c < seq.txt | gzip -dc | cmp - seq.txt && echo "gzip -9 round trip identical"
cp seq.txt s2.txt; gzip s2.txt; ls s2.txt* ; gunzip s2.txt.gz; cmp s2.txt seq.txt && echo "gunzip identical"
gzip -c < seq.txt > s.gz; gzip -t s.gz && echo "gzip -t ok"; zcat s.gz | tail -n 1

echo "== tree and find"
mkdir -p tree/a/b/c tree/d tree/e/f
for d in tree tree/a tree/a/b tree/a/b/c tree/d tree/e/f; do
    for n in 1 2; do echo "$d/$n" > "$d/file$n.txt"; done
done
echo hidden > tree/.hidden
ln -s a/b tree/link-to-b
find tree | sort
find tree -type f -name 'file1*' | sort
find tree -type d | sort | tr '\n' ' '; echo
find tree -type l
find tree -name '*.txt' -path '*b*' | sort | wc -l
find tree -maxdepth 1 | sort | tr '\n' ' '; echo
find tree -type f | sort | while read -r f; do cat "$f"; done | md5sum

echo "== tar round trip"
tar cf tree.tar tree
tar tf tree.tar | sort | md5sum
tar tf tree.tar | wc -l
mkdir out && cd out && tar xf ../tree.tar && cd ..
ok=yes; for f in $(cd out && find . -type f | sort); do cmp "$f" "out/$f" || ok=no; done; echo "all extracted files identical: $ok"
[ -L out/tree/link-to-b ] && echo "symlink preserved -> $(readlink out/tree/link-to-b)"
tar czf tree.tgz tree && mkdir out2 && tar xzf tree.tgz -C out2 && diff -r tree out2/tree && echo "tar.gz round trip identical"
tar cf - tree | tar tf - | grep -c 'file2.txt'

echo "== file operations"
cp -r tree copy && diff -r tree copy && echo "cp -r identical"
mv copy/a copy/moved && ls copy | sort | tr '\n' ' '; echo
ln copy/d/file1.txt hard && echo "hard link content: $(cat hard)"
rm -r copy && [ ! -e copy ] && echo "rm -r ok"
echo "diff output:"; printf 'a\nb\nc\n' > x1; printf 'a\nB\nc\nd\n' > x2; diff x1 x2 | grep '^[-+<>]' | grep -v '^[-+][-+]'
cmp x1 x2 >/dev/null; echo "cmp different -> $?"
stat -c '%s %F' seq.txt; stat -c '%F' tree
dd if=seq.txt of=part.bin bs=1000 count=3 skip=2 2>/dev/null; wc -c < part.bin; md5sum < part.bin
head -c 100000 /dev/zero | md5sum
