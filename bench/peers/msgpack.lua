-- bench/peers/msgpack.lua - the Snapshot as MessagePack with
-- lua-MessagePack (fperrad, pure Lua). Debian ships it for Lua 5.1-5.3
-- only; the 5.3 file runs unchanged on 5.4, so it is loaded from there
-- when require fails. (lua-mpack, the C binding, is built for 5.1-5.3
-- and does not load on 5.4.) Floats go out as float64, as by default.
local ok, mp = pcall(require, "MessagePack")
if not ok then
  local path = package.searchpath("MessagePack", "/usr/share/lua/5.3/?.lua")
  if not path then error(mp, 0) end
  mp = dofile(path)
end

return {name = "lua-MessagePack", encode = mp.pack, decode = mp.unpack}
