-- The dashboard's list of secret keys (issue 30) tells keys apart by a hint: the key's last four characters,
-- as "sk_…abcd", the way an operator matches a key in a config file to a row. Four characters of a random
-- 43-character key give nothing useful to a guesser; the key itself is still stored only as its hash. Keys
-- issued before this have no hint (NULL).
ALTER TABLE secret_keys ADD COLUMN hint text;
