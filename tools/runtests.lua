-- Runs the C unit tests, the busted specs and extra steps; prints one
-- closing line "N passed, N failed" and exits non-zero on any failure.
-- usage: lua5.4 tools/runtests.lua "<busted command>" <c test binaries...>
--          [-- "<step command>"...]
-- A step (make sanitize, make fuzz-short) counts as one test: passed when
-- it exits 0. A step written "&command" starts at once and runs alongside
-- the rest (the machine has a core for it); its result is reported last.
local busted_cmd = arg[1]
local passed, failed = 0, 0
local tests, steps = {}, {}
do
  local list = tests
  for i = 2, #arg do
    if arg[i] == "--" and list == tests then list = steps
    else list[#list + 1] = arg[i] end
  end
end

local function run(cmd)
  local p = assert(io.popen(cmd .. " 2>&1", "r"))
  local out = p:read("a")
  local ok, _, code = p:close()
  return out, ok and 0 or code
end

-- background steps: started now, read (waited for) at the end
local started, t_start = {}, os.time()
for _, cmd in ipairs(steps) do
  if cmd:sub(1, 1) == "&" then
    started[#started + 1] = { cmd = cmd:sub(2), p = assert(io.popen(cmd:sub(2) .. " 2>&1", "r")) }
  end
end

for _, t in ipairs(tests) do
  local out, code = run("./" .. t)
  io.write(out)
  local p, f = out:match("(%d+) passed, (%d+) failed%s*$")
  if not p then
    print(t .. ": no summary line (exit " .. tostring(code) .. ")")
    failed = failed + 1
  else
    passed, failed = passed + tonumber(p), failed + tonumber(f)
    if code ~= 0 and tonumber(f) == 0 then failed = failed + 1 end
  end
end

local env = 'LUA_PATH="./lua/?.lua;./lua/?/init.lua;./?.lua;;" LUA_CPATH="./build/?.so;;" '
local out, code = run(env .. busted_cmd .. " -o TAP spec")
local bp, bf = 0, 0
for line in out:gmatch("[^\n]+") do
  if line:match("^ok %d") then bp = bp + 1
  elseif line:match("^not ok %d") then bf = bf + 1; print(line)
  end
end
-- print failure details (TAP diagnostics) but not the long list of passes
for block in out:gmatch("not ok %d+[^\n]*\n(.-)\n[on][ko]t? ") do io.write(block, "\n") end
if bp + bf == 0 or (code ~= 0 and bf == 0) then
  io.write(out)
  bf = bf + 1
end
print(string.format("busted: %d passed, %d failed", bp, bf))
passed, failed = passed + bp, failed + bf

local function report (cmd, sout, ok, secs, how)
  io.write(sout)
  print(string.format("%s: %s (%d s%s)", cmd, ok and "passed" or "FAILED", secs, how or ""))
  if ok then passed = passed + 1 else failed = failed + 1 end
end

for _, cmd in ipairs(steps) do
  if cmd:sub(1, 1) == "&" then goto continue end
  local t0 = os.time()
  local sout, scode = run(cmd)
  report(cmd, sout, scode == 0, os.time() - t0)
  ::continue::
end
for _, b in ipairs(started) do
  local sout = b.p:read("a")
  local ok = b.p:close()
  report(b.cmd, sout, ok == true, os.time() - t_start, ", alongside the rest")
end
print(string.format("%d passed, %d failed", passed, failed))
os.exit(failed == 0 and 0 or 1)
