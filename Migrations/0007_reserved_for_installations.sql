-- Placeholder on the marmot27b branch only: version 7 belongs to the installations change of another
-- branch, which replaces this file when the branches merge (versions may not have gaps).
SELECT 1;
