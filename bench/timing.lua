-- Interleaved timing shared by the Lua benchmarks: each op is sized to run
-- about 'seconds', then every round runs every op once, so a slow moment of
-- the machine hits all peers alike; the result is the median rate.
local M = {}

local clock = os.clock

local function timed(op, n)
  collectgarbage("collect")
  local t0 = clock()
  op.run(n)
  return clock() - t0
end

function M.median(t)
  table.sort(t)
  local m = #t // 2
  return #t % 2 == 1 and t[m + 1] or (t[m] + t[m + 1]) / 2
end

-- Fill op.n (iterations per run) and op.rates (one rate per round) of each
-- op in 'ops'; op.run(n) does n iterations.
function M.run(ops, seconds, rounds)
  for _, op in ipairs(ops) do
    local n = 1
    local dt = timed(op, n)
    while dt < seconds / 10 do
      n = n * 4
      dt = timed(op, n)
    end
    op.n = math.max(1, math.floor(n * seconds / dt + 0.5))
    op.rates = {}
  end
  for _ = 1, rounds do
    for _, op in ipairs(ops) do
      op.rates[#op.rates + 1] = op.n / timed(op, op.n)
    end
  end
end

-- Bytes allocated per iteration of 'run' in the steady state: the collector
-- stopped, and counted over a second batch of 'n' (the first calls after a
-- collection may regrow shared structures, the string table, once).
function M.alloc(run, n)
  collectgarbage("collect")
  collectgarbage("stop")
  run(n)
  local before = collectgarbage("count")
  run(n)
  local after = collectgarbage("count")
  collectgarbage("restart")
  return (after - before) * 1024 / n
end

-- The correctness checks a bench runs before timing: check(ok, what
-- [, detail]) prints a failed one and counts it; checked() then stops the
-- bench when any failed, so nothing wrong is timed.
function M.checker()
  local failures = 0
  local function check(ok, what, detail)
    if not ok then
      failures = failures + 1
      print(("FAIL  %s%s"):format(what, detail and (": " .. tostring(detail)) or ""))
    end
    return ok
  end
  local function checked()
    if failures > 0 then
      print(("%d correctness check(s) failed; no timing"):format(failures))
      os.exit(1)
    end
  end
  return check, checked
end

return M
