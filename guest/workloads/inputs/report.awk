# AWK workload (guest/workloads, docs/workloads.md): a report over a
# generated sales log, standing in for text-processing scripting
# (associative arrays, field splitting, regular expressions, printf).
#
# Usage: mawk -f report.awk sales-SIZE.txt
# Input lines: id|day|region|product|qty|price|customer|comment words...
#
# Output order never depends on the hash order of an array: keys are
# printed in first-seen order, or sorted with the insertion sort below.

BEGIN { FS = "|" }

{
    n++
    region = $3; product = $4; qty = $5 + 0; price = $6 + 0; cust = $7
    if (!(region in rev)) { regions[++nregions] = region }
    rev[region] += qty * price
    cnt[region]++
    if (!(product in pq)) { products[++nproducts] = product }
    pq[product] += qty
    spend[cust] += qty * price
    if (qty > maxq) { maxq = qty; maxid = $1 }

    # Words of the comment: frequencies, and a pattern census.
    nw = split($8, w, " ")
    for (i = 1; i <= nw; i++) {
        if (!(w[i] in freq)) { words[++nwords] = w[i] }
        freq[w[i]]++
    }
    if ($8 ~ /(ka|lo|mi)[a-z]*(ne|ta|ou) /) pat++
    if (match($8, /[aeiou][a-z][aeiou][a-z][aeiou]/)) triple += RSTART
    day = $2 + 0
    month = int(day / 30)
    monthly[month] += qty
    if (month > maxmonth) maxmonth = month
    total += qty * price
}

function isort(keys, m, val,    i, j, k) {
    # Descending by val[], ties by key; insertion sort is enough for the
    # sizes printed (it runs on the top candidates only).
    for (i = 2; i <= m; i++) {
        k = keys[i]
        for (j = i - 1; j >= 1 && (val[keys[j]] < val[k] || (val[keys[j]] == val[k] && keys[j] > k)); j--)
            keys[j + 1] = keys[j]
        keys[j + 1] = k
    }
}

END {
    printf "records %d, total %.2f, largest qty %d (record %s)\n", n, total, maxq, maxid
    isort(regions, nregions, rev)
    for (i = 1; i <= nregions && i <= 10; i++)
        printf "region %s: %d orders, revenue %.2f\n", regions[i], cnt[regions[i]], rev[regions[i]]
    # Top words: keep a bounded candidate list of the most frequent.
    m = 0
    for (i = 1; i <= nwords; i++) {
        k = words[i]
        if (m < 20) { top[++m] = k; isort(top, m, freq); continue }
        if (freq[k] > freq[top[m]] || (freq[k] == freq[top[m]] && k < top[m])) {
            top[m] = k; isort(top, m, freq)
        }
    }
    for (i = 1; i <= 10; i++) printf "word %s %d\n", top[i], freq[top[i]]
    printf "distinct words %d, pattern lines %d, match offsets %d\n", nwords, pat, triple
    # Best customers, same bounded selection.
    m = 0
    for (c in spend) {
        if (m < 5) { best[++m] = c; isort(best, m, spend); continue }
        if (spend[c] > spend[best[m]] || (spend[c] == spend[best[m]] && c < best[m])) {
            best[m] = c; isort(best, m, spend)
        }
    }
    for (i = 1; i <= m; i++) printf "customer %s %.2f\n", best[i], spend[best[i]]
    s = ""
    for (i = 0; i <= maxmonth; i += 12) s = s sprintf(" %d", monthly[i])
    print "yearly first-month qty:" s
    # gsub over a rebuilt line.
    line = ""
    for (i = 1; i <= nproducts && i <= 200; i++) line = line products[i] "=" pq[products[i]] ";"
    changed = gsub(/[0-9]+/, "#", line)
    printf "products %d, gsub %d, length %d\n", nproducts, changed, length(line)
}
