-- SQLite workload (guest/workloads, docs/workloads.md): an in-memory
-- database built, indexed, queried, updated and partly deleted, standing in
-- for a database / B-tree workload (SPEC CPU has none; the NVMM papers use
-- key-value and B-tree stores).
--
-- Usage: sqlite3 -batch :memory: ".parameter set @n N" ".read bench.sql"
--   @n  rows of the orders table (customers @n/10, products 1000)
--
-- Deterministic: values come from integer hashes of the row number (no
-- random(), no date/time functions), and every query orders its output.

CREATE TABLE customers(id INTEGER PRIMARY KEY, name TEXT, region INTEGER, since INTEGER);
CREATE TABLE products(id INTEGER PRIMARY KEY, title TEXT, price REAL, weight INTEGER);
CREATE TABLE orders(id INTEGER PRIMARY KEY, customer INTEGER, product INTEGER,
                    qty INTEGER, day INTEGER, note TEXT);

WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < @n / 10)
INSERT INTO customers
SELECT x, 'cust-' || hex((x * 2654435761) % 4294967296), (x * 40507) % 23, 1990 + (x * 7919) % 35 FROM c;

WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1000)
INSERT INTO products
SELECT x, 'product ' || substr('abcdefghijklmnopqrstuvwxyz', 1 + x % 26, 5) || ' ' || x,
       ((x * 48271) % 99991) / 100.0, 1 + (x * 16807) % 5000 FROM c;

WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < @n)
INSERT INTO orders
SELECT x, 1 + ((x * 2654435761) % 4294967296) * (1 + x % 5) % (@n / 10), 1 + (x * 1103515245 / 65536) % 1000, 1 + (x * 31) % 9,
       (x * 104729) % 3650, printf('order %d for %x', x, (x * 2246822519) % 4294967296) FROM c;

CREATE INDEX orders_customer ON orders(customer);
CREATE INDEX orders_product_day ON orders(product, day);
CREATE INDEX customers_region ON customers(region);

SELECT 'rows', (SELECT count(*) FROM customers), (SELECT count(*) FROM products), (SELECT count(*) FROM orders);

-- Aggregates over joins.
SELECT 'region', c.region, count(*), sum(o.qty), printf('%.2f', sum(o.qty * p.price))
FROM orders o JOIN customers c ON c.id = o.customer JOIN products p ON p.id = o.product
GROUP BY c.region ORDER BY c.region LIMIT 8;

-- Top customers by revenue (a sort of a large intermediate result).
SELECT 'top', c.name, count(*), printf('%.2f', sum(o.qty * p.price)) AS revenue
FROM orders o JOIN customers c ON c.id = o.customer JOIN products p ON p.id = o.product
GROUP BY o.customer ORDER BY sum(o.qty * p.price) DESC, o.customer LIMIT 5;

-- Index range scans.
SELECT 'range', sum(qty), count(*) FROM orders WHERE product BETWEEN 100 AND 140 AND day BETWEEN 1000 AND 2000;

-- Window functions.
SELECT 'window', product, day, running FROM (
  SELECT product, day, sum(qty) OVER (PARTITION BY product ORDER BY day, id) AS running,
         row_number() OVER (PARTITION BY product ORDER BY day DESC, id) AS rn
  FROM orders WHERE product <= 3)
WHERE rn = 1 ORDER BY product;

-- Correlated subquery through the index.
SELECT 'busiest', count(*) FROM customers c
WHERE (SELECT count(*) FROM orders o WHERE o.customer = c.id) > 12;

-- Updates and deletes (B-tree rebalancing, index maintenance).
UPDATE orders SET qty = qty + 1, note = note || ' (amended)' WHERE id % 7 = 3;
DELETE FROM orders WHERE day % 11 = 5;
UPDATE products SET price = round(price * 1.05, 2) WHERE weight > 2500;

SELECT 'after', count(*), sum(qty), sum(length(note)) FROM orders;
SELECT 'text', count(*) FROM orders WHERE note LIKE '%ff%';

-- A self-join with DISTINCT and a temporary B-tree.
SELECT 'pairs', count(*) FROM (
  SELECT DISTINCT a.customer, b.product FROM orders a JOIN orders b ON a.customer = b.customer
  WHERE a.id < b.id AND a.product % 50 = 0);

SELECT 'integrity', * FROM pragma_integrity_check;
