-- Lua 5.4 workload (guest/workloads, docs/workloads.md): an interpreter
-- running allocation-heavy, string-heavy and table-heavy code, standing in
-- for SPEC CPU 2017's 500.perlbench_r (an interpreter's dispatch loop, its
-- garbage collector and its hash tables).
--
-- Usage: lua5.4 bench.lua SCALE      (SCALE >= 1; the work is about linear in it)
--
-- Deterministic: its own LCG, no os.time/os.clock, and every table
-- iteration whose order would matter goes through sorted keys.

local SCALE = tonumber(arg and arg[1]) or 1

-- A 32-bit LCG (Numerical Recipes), exact in Lua 5.4 integers.
local seed = 12345
local function rand(n)
  seed = (seed * 1664525 + 1013904223) & 0xffffffff
  return (seed >> 8) % n
end

-- 1. Binary trees (the benchmarks game): allocation and GC.
local function bottom_up(d)
  if d == 0 then return {} end
  d = d - 1
  return { bottom_up(d), bottom_up(d) }
end
local function check(t)
  if t[1] then return 1 + check(t[1]) + check(t[2]) end
  return 1
end
do
  local maxd = 8
  local long = bottom_up(maxd + 2)
  local total = 0
  for _ = 1, SCALE do
    for d = 4, maxd, 2 do
      local iters = 1 << (maxd - d + 2)
      local c = 0
      for _ = 1, iters do c = c + check(bottom_up(d)) end
      total = total + c
    end
  end
  print(string.format("trees: depth %d, long-lived %d nodes, %d checked", maxd, check(long), total))
end

-- 2. Text: build a document from pseudo-words, then count words with
-- gmatch, rewrite it with gsub and find the most frequent words.
do
  local syl = { "ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "ze", "pa", "qui", "dor", "fen", "gal" }
  local vocab = {}
  for i = 1, 2000 do
    local parts, n = {}, 1 + rand(3)
    for j = 1, n do parts[j] = syl[1 + rand(#syl)] end
    vocab[i] = table.concat(parts)
  end
  local lines = {}
  for l = 1, 100 * SCALE do
    local words = {}
    for w = 1, 6 + rand(10) do
      -- Skewed choice: small indices are more frequent.
      local r = rand(2000)
      words[w] = vocab[1 + (r * r) // 2000]
    end
    lines[l] = table.concat(words, " ")
  end
  local text = table.concat(lines, "\n")
  local freq, nwords = {}, 0
  for w in text:gmatch("%a+") do
    freq[w] = (freq[w] or 0) + 1
    nwords = nwords + 1
  end
  local keys = {}
  for k in pairs(freq) do keys[#keys + 1] = k end
  table.sort(keys, function(a, b)
    if freq[a] ~= freq[b] then return freq[a] > freq[b] end
    return a < b
  end)
  local top = {}
  for i = 1, 5 do top[i] = keys[i] .. "=" .. freq[keys[i]] end
  local upper, n = text:gsub("(%a)(%a*)", function(a, b) return a:upper() .. b end)
  local h = 0
  for i = 1, #upper, 7 do h = (h * 31 + upper:byte(i)) & 0xffffffff end
  print(string.format("text: %d bytes, %d words, %d distinct; top %s; gsub %d, hash %08x",
    #text, nwords, #keys, table.concat(top, " "), n, h))
end

-- 3. Records: build, sort with a comparator, group and aggregate.
do
  local recs = {}
  for i = 1, 1000 * SCALE do
    recs[i] = { id = i, region = "r" .. rand(17), qty = 1 + rand(50), price = (1 + rand(10000)) / 100 }
  end
  table.sort(recs, function(a, b)
    if a.region ~= b.region then return a.region < b.region end
    if a.qty ~= b.qty then return a.qty > b.qty end
    return a.id < b.id
  end)
  local sums, order = {}, {}
  for _, r in ipairs(recs) do
    if not sums[r.region] then sums[r.region] = 0; order[#order + 1] = r.region end
    sums[r.region] = sums[r.region] + r.qty * r.price
  end
  local out = {}
  for i = 1, math.min(#order, 6) do out[i] = string.format("%s:%.2f", order[i], sums[order[i]]) end
  print(string.format("records: %d sorted, first id %d, last id %d; %s", #recs, recs[1].id,
    recs[#recs].id, table.concat(out, " ")))
end

-- 4. Numbers: spectral norm (floating point through closures and arrays).
do
  local function A(i, j)
    local ij = i + j - 1
    return 1.0 / (ij * (ij - 1) * 0.5 + i)
  end
  local function Av(x, y, N)
    for i = 1, N do
      local a = 0
      for j = 1, N do a = a + x[j] * A(i, j) end
      y[i] = a
    end
  end
  local function Atv(x, y, N)
    for i = 1, N do
      local a = 0
      for j = 1, N do a = a + x[j] * A(j, i) end
      y[i] = a
    end
  end
  local N = 40
  local u, v, t = {}, {}, {}
  for i = 1, N do u[i] = 1 end
  for _ = 1, SCALE do
    Av(u, t, N); Atv(t, v, N)
    Av(v, t, N); Atv(t, u, N)
  end
  local vBv, vv = 0, 0
  for i = 1, N do
    vBv = vBv + u[i] * v[i]
    vv = vv + v[i] * v[i]
  end
  print(string.format("spectral norm (N=%d): %.12f", N, math.sqrt(vBv / vv)))
end

-- 5. Closures and coroutines: a generator pipeline.
do
  local function gen(n)
    return coroutine.wrap(function()
      for i = 1, n do coroutine.yield(i) end
    end)
  end
  local function filter(p, g)
    return coroutine.wrap(function()
      for x in g do if p(x) then coroutine.yield(x) end end
    end)
  end
  local function map(f, g)
    return coroutine.wrap(function()
      for x in g do coroutine.yield(f(x)) end
    end)
  end
  local s, c = 0, 0
  for x in map(function(x) return x * x % 1000003 end,
               filter(function(x) return x % 3 ~= 0 end, gen(3000 * SCALE))) do
    s = (s + x) % 1000000007
    c = c + 1
  end
  print(string.format("coroutines: %d values, sum %d", c, s))
end
