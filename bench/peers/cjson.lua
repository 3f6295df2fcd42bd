-- bench/peers/cjson.lua - the Snapshot as JSON with lua-cjson. The table
-- goes in as it is: full doubles (14 significant digits), key names on
-- every entity; numbers come back as floats.
local cjson = require "cjson"

return {name = "lua-cjson", encode = cjson.encode, decode = cjson.decode}
