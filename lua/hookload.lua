--- uphook.hookload: load a hook in a confined child only to read its
--- declarations (lint, list). Nothing runs but the chunk itself.
local engine = require "uphook.engine"

local M = {}

---@return table|nil info, string|nil err, table|nil child
function M.load(c, path, name, keep)
  local src, err = c.sys.read(path)
  if not src then return nil, err or (path .. ": no such file") end
  local child, serr = c.sandbox.spawn { source = src, chunkname = "@" .. path,
    timeout = 10, deadline = c.sandbox.now() + 10 }
  if not child then return nil, serr end
  local ok, desc, kind = child:loaded(function(prim)
    error(prim .. " cannot be called while the hook file loads", 0)
  end)
  if not ok then
    child:close()
    return nil, kind == "error" and (name .. ": " .. tostring(desc))
      or tostring(desc)
  end
  local vok, info = pcall(engine.validate, desc[1], name)
  if not vok then
    child:close()
    return nil, type(info) == "table" and info.message or tostring(info)
  end
  if keep then return info, nil, child end
  child:close()
  return info
end

return M
