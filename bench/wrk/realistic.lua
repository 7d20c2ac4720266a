-- The realistic row: GET /user/<id> with a random id among the server's records (their count,
-- from the live heap size, is the script's argument), so each request looks up another record
-- of the heap, as an API's clients do. Seeded: every server gets the same sequence.
local count = 1000

init = function(args)
  count = tonumber(args[1]) or count
  math.randomseed(34)
end

request = function()
  return wrk.format(nil, "/user/" .. math.random(1, count))
end
