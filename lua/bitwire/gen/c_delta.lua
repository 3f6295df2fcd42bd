-- Delta forms of the generated C (T_write_delta / T_read_delta).
local M = {}

function M.protos() end
function M.funcs() end

return M
