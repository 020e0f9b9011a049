--[[
job_submit.lua - makes gpupool the one that starts jobs on this Slurm cluster.

What it does: every job submitted to Slurm (sbatch, srun, salloc, by anyone)
enters HELD (priority 0). gpupool sees it pending, decides where it runs,
pins its nodes and releases it; nothing else starts it, so Slurm's own
scheduler cannot place a job behind gpupool's back. Jobs gpupool submits
itself (their comment starts with "gpupool:") are held the same way.
Releasing a held job is kept for root (gpupool runs as root): a job's
owner cannot `scontrol release` it past gpupool. Other changes to a job
(scontrol update) are left alone. Note that a plain `scontrol requeue`
does not pass through this plugin and leaves the job released: Slurm then
starts it by itself once its EligibleTime passes (now + 121 s); gpupool
uses `scontrol requeuehold`.

Install: put this file next to slurm.conf (job_submit/lua reads
job_submit.lua from slurm.conf's directory), set in slurm.conf

    JobSubmitPlugins=lua

and run `scontrol reconfigure`. Held jobs are logged to slurmctld's log, one
line each ("gpupool: held ...").

Exempting partitions: an admin may leave some partitions to Slurm (say an
interactive or debug partition) by naming them in exempt_partitions below;
a job whose partitions are all exempt is not held (a job with no partition
is judged by the default partition). gpupool's own jobs are held in any
partition: gpupool releases them.
--]]

local exempt_partitions = {}   -- e.g. { "debug", "interactive" }

local exempt = {}
for _, name in ipairs(exempt_partitions) do
   exempt[name] = true
end

-- the partition a job without one lands in
local function default_partition(part_list)
   for name, part in pairs(part_list or {}) do
      local ok, is_default = pcall(function() return part.flag_default end)
      if ok and is_default ~= nil and is_default ~= 0 and is_default ~= false then
         return part.name or name
      end
   end
   return nil
end

-- true when every partition the job asks for is exempt
local function is_exempt(job_desc, part_list)
   if next(exempt) == nil then
      return false
   end
   local parts = job_desc.partition or default_partition(part_list)
   if parts == nil then
      return false
   end
   local any = false
   for name in string.gmatch(parts, "[^,]+") do
      if not exempt[name] then
         return false
      end
      any = true
   end
   return any
end

function slurm_job_submit(job_desc, part_list, submit_uid)
   local comment = job_desc.comment or ""
   local ours = string.sub(comment, 1, 8) == "gpupool:"
   if not ours and is_exempt(job_desc, part_list) then
      return slurm.SUCCESS
   end
   job_desc.priority = 0
   slurm.log_info("gpupool: held %s job '%s' of uid %d from uid %d (partition %s)",
                  ours and "gpupool" or "user", job_desc.name or "",
                  job_desc.user_id or submit_uid, submit_uid,
                  job_desc.partition or "default")
   return slurm.SUCCESS
end

-- the priority `scontrol release` asks for (Slurm's INFINITE); other
-- updates carry NO_VAL - 1
local RELEASE = 4294967295

function slurm_job_modify(job_desc, job_rec, part_list, modify_uid)
   if job_desc.priority ~= RELEASE or modify_uid == 0 then
      return slurm.SUCCESS
   end
   local ok, parts = pcall(function() return job_rec.partition end)
   if ok and parts ~= nil and is_exempt({ partition = parts }, part_list) then
      return slurm.SUCCESS
   end
   slurm.log_info("gpupool: refused uid %d a release of job %s", modify_uid,
                  tostring(job_desc.job_id))
   slurm.log_user("gpupool starts the jobs on this cluster: a held job is released by gpupool, not by hand")
   return slurm.ERROR
end

slurm.log_info("gpupool: job_submit.lua loaded, every job enters held")
return slurm.SUCCESS
