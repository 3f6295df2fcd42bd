-- `bitwire blob` without bitwire on PATH: lua5.4 tools/blob.lua ARGS...
-- bin/bitwire finds the checkout's modules from arg[0] (this file's
-- path), so this runs it as `bitwire blob ARGS...`.
local here = arg[0]:match("^(.*)/[^/]*$") or "."
table.insert(arg, 1, "blob")
dofile(here .. "/../bin/bitwire")
