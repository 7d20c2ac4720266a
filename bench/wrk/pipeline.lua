-- Pipelining as in TechEmpower's pipeline.lua: every write carries `depth`
-- copies of the request (run with `-- 16`). wrk counts each parsed response,
-- so "requests" stays the number of responses.
init = function(args)
  local r = {}
  local depth = tonumber(args[1]) or 1
  for i = 1, depth do
    r[i] = wrk.format()
  end
  req = table.concat(r)
end

request = function()
  return req
end
