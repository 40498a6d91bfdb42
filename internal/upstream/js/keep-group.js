'use strict';
// Preloaded (node --require) into processes that launch Chromium through
// Playwright. Playwright spawns browsers detached, in a process group of
// their own, so that it can kill(-pid) them; the proxy wants them in the
// group of the process it started instead, so that stopping that group, or
// the reaper's SIGKILL to it when its leader dies, reaches the browser too.
const childProcess = require('child_process');

const undetached = new Set();
const spawn = childProcess.spawn;
childProcess.spawn = function (command, args, options) {
  if (Array.isArray(args) && options && options.detached) {
    const child = spawn.call(this, command, args, { ...options, detached: false });
    if (child.pid) {
      undetached.add(child.pid);
      child.once('exit', () => undetached.delete(child.pid));
    }
    return child;
  }
  return spawn.apply(this, arguments);
};

// Playwright's force-kill signals the group it expected (-pid); there is no
// such group now, so signal the process itself.
const kill = process.kill;
process.kill = function (pid, signal) {
  try {
    return kill.call(process, pid, signal);
  } catch (e) {
    if (pid < 0 && e && e.code === 'ESRCH' && undetached.has(-pid))
      return kill.call(process, -pid, signal);
    throw e;
  }
};
