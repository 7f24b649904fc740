// The in-isolate job runner of the pyodide driver, evaluated once Pyodide has booted (as
// globalThis.__sf_py) and given the harness source (globalThis.__sf_harness) and the largest
// file a job may write (globalThis.__sf_maxFileBytes) and the most bytes its files may hold in all
// (globalThis.__sf_maxJobFileBytes). Its completion
// value is { job, partial, restore, info }:
//  - job(code, stdin, files, fetch, maxOutputBytes, memoryBytes, entropy) runs one job and says
//    whether the sandbox is still clean (`clean: false` → the host retires the isolate, `why` in
//    words and `reason` in one word of the runner's retire reasons); `files`
//    maps absolute paths in the job's places to contents, `fetch` is a list of [path as asked,
//    absolute path in a place];
//  - partial() gives what the job wrote so far, when it was stopped hard;
//  - restore() puts the wasm linear memory, the file system's streams and cwd back to the
//    baseline taken here, so no Python state survives a job (docs/pyodide-driver-design.md).
;(() => {
  const py = globalThis.__sf_py
  const M = py._module
  const FS = M.FS
  const counter = globalThis.__sf_counter
  const decoder = new TextDecoder()
  const WORK = '/tmp/work'
  const SF = '/tmp/.sf'
  // The places a job may write, emptied after it but for what the harness and Emscripten keep
  // there; a request's files are written and fetched there only.
  const SCRATCH = [
    ['/tmp', ['work', '.sf']],
    ['/mnt', []],
    ['/dev/shm', ['tmp']]
  ]
  const PLACES = SCRATCH.map(([dir]) => dir)
  const inPlaces = (path) => PLACES.some((p) => path === p || path.startsWith(p + '/'))
  const FETCH_MAX_BYTES = 16 << 20 // a larger file is not returned (not cut either), as on the executor's backends

  // Files: while a job runs, none grows past __sf_maxFileBytes, as RLIMIT_FSIZE bounds them on the
  // process backend: a write that would cross it writes up to it, a write or truncate past it fails
  // with EFBIG (22 in Emscripten's numbering); a shared mapping synced back is cut at it. And the
  // job's files hold at most __sf_maxJobFileBytes more than they did when it started (what it
  // deletes or truncates counts back), as a full tmpfs bounds them there: a write that would cross
  // it writes up to it, a write or a growing truncate past it fails with ENOSPC (51). The files live
  // in the isolate's heap: without the quota a job filling /tmp would exhaust the heap and break its
  // sandbox, instead of getting the OSError a full disk gives.
  const EFBIG = 22
  const ENOSPC = 51
  const maxFileBytes = globalThis.__sf_maxFileBytes ?? Infinity
  const maxJobFileBytes = globalThis.__sf_maxJobFileBytes ?? Infinity
  let fileCap = Infinity
  let quota = Infinity
  let held = 0 // bytes the job's files grew by since it started, less what it freed
  const size = (node) => (FS.isFile(node.mode) ? (node.usedBytes ?? 0) : 0)
  // The harness writes the job's outcome (a few KiB) after the job's code, quota full or not.
  const OUTCOME_RESERVE = 1 << 20
  const room = (node) =>
    quota -
    held +
    (node.name === 'out.json' && node.parent.name === '.sf' && node.parent.parent.name === 'tmp' ? OUTCOME_RESERVE : 0)
  const fileOps = FS.filesystems.MEMFS.ops_table.file
  const dirOps = FS.filesystems.MEMFS.ops_table.dir
  const { write, msync } = fileOps.stream
  fileOps.stream.write = function (stream, buffer, offset, length, position, canOwn) {
    if (length > 0 && position + length > fileCap) {
      if (position >= fileCap) throw new FS.ErrnoError(EFBIG)
      length = fileCap - position
    }
    const node = stream.node
    const before = size(node)
    if (length > 0 && position + length - before > room(node)) {
      const fits = before + Math.max(0, room(node)) - position
      if (fits <= 0) throw new FS.ErrnoError(ENOSPC)
      length = fits
    }
    const wrote = write.call(this, stream, buffer, offset, length, position, canOwn)
    held += size(node) - before
    return wrote
  }
  fileOps.stream.msync = function (stream, buffer, offset, length, flags) {
    const before = size(stream.node)
    const out = msync.call(this, stream, buffer, offset, Math.max(0, Math.min(length, fileCap - offset)), flags)
    held += size(stream.node) - before
    return out
  }
  const { setattr } = fileOps.node
  fileOps.node.setattr = function (node, attr) {
    if (attr.size != null && attr.size > fileCap) throw new FS.ErrnoError(EFBIG)
    const before = size(node)
    if (attr.size != null && attr.size - before > room(node)) throw new FS.ErrnoError(ENOSPC)
    const out = setattr.call(this, node, attr)
    held += size(node) - before
    return out
  }
  // What a job removes counts back: unlinked, or replaced by a rename onto its name.
  const { unlink, rename } = dirOps.node
  dirOps.node.unlink = function (parent, name) {
    const node = parent.contents[name]
    const freed = node === undefined ? 0 : size(node)
    const out = unlink.call(this, parent, name)
    held -= freed
    return out
  }
  dirOps.node.rename = function (oldNode, newDir, newName) {
    const replaced = newDir.contents[newName]
    const freed = replaced === undefined || replaced === oldNode ? 0 : size(replaced)
    const out = rename.call(this, oldNode, newDir, newName)
    held -= freed
    return out
  }

  // fd 1 and 2: captured here, capped while written, never buffered in the TTY.
  const streams = { stdout: null, stderr: null }
  const sink = (name) => ({
    write(buffer) {
      const s = streams[name]
      if (s === null || s.truncated) return buffer.length
      const room = s.cap - s.size
      if (buffer.length <= room) {
        s.parts.push(buffer.slice())
        s.size += buffer.length
      } else {
        if (room > 0) {
          s.parts.push(buffer.slice(0, room))
          s.size += room
        }
        s.truncated = true
      }
      return buffer.length
    }
  })
  py.setStdout(sink('stdout'))
  py.setStderr(sink('stderr'))
  py.setStdin({ stdin: () => undefined })
  const text = (s) => {
    const all = new Uint8Array(s.size)
    let at = 0
    for (const p of s.parts) {
      all.set(p, at)
      at += p.length
    }
    let end = all.length
    if (s.truncated) {
      // Drop a UTF-8 sequence cut by the cap.
      let back = end - 1
      while (back >= 0 && back > end - 4 && (all[back] & 0xc0) === 0x80) back--
      if (back >= 0) {
        const lead = all[back]
        const need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1
        if (end - back < need) end = back
      }
    }
    return decoder.decode(all.subarray(0, end))
  }

  py.runPython(globalThis.__sf_harness, { filename: '/sandfleet/harness.py' })
  const run = py.globals.get('_sf_run')
  const interrupt = globalThis.__sf_interrupt
  py.setInterruptBuffer(interrupt)

  let growLimit = 0
  M.__sf_maxHeap = () => growLimit

  const sbrk = () => M.HEAPU32[M._emscripten_get_sbrk_ptr() >> 2]
  // The file system but for what is in the places (emptied after each job) and /proc/self (the
  // streams open now): a job that wrote anywhere else (/dev, /proc, /lib) changed it.
  const walk = () => {
    const seen = []
    const visit = (path) => {
      if (path === '/proc/self') return
      let node
      try {
        node = FS.lookupPath(path, { follow: false }).node
      } catch (e) {
        seen.push(path + ' ?')
        return
      }
      if (PLACES.includes(path)) {
        seen.push(path + ' ' + node.mode + ' ' + node.id)
        return
      }
      const size = node.usedBytes ?? (node.contents && node.contents.length) ?? 0
      const mtime = node.mtime instanceof Date ? node.mtime.getTime() : node.mtime
      seen.push(path + ' ' + node.mode + ' ' + size + ' ' + mtime + ' ' + node.id)
      if (FS.isDir(node.mode) && !FS.isMountpoint(node)) {
        for (const name of FS.readdir(path).sort())
          if (name !== '.' && name !== '..') visit(path === '/' ? '/' + name : path + '/' + name)
      }
    }
    visit('/')
    return seen.join('\n')
  }
  const openStreams = () => {
    const out = new Map()
    FS.streams.forEach((s, fd) => {
      if (s) out.set(fd, s.position)
    })
    return out
  }
  const removeTree = (path) => {
    for (const name of FS.readdir(path)) {
      if (name === '.' || name === '..') continue
      const child = path + '/' + name
      const node = FS.lookupPath(child, { follow: false }).node
      if (FS.isDir(node.mode)) {
        removeTree(child)
        FS.rmdir(child)
      } else FS.unlink(child)
    }
  }
  // Empties a place but for the entries in `keep`; a place that is no longer a directory (the job
  // replaced it by a link) throws, and the sandbox retires.
  const empty = (dir, keep) => {
    if (!FS.isDir(FS.lookupPath(dir, { follow: false }).node.mode)) throw new Error(dir + ' is not a directory')
    for (const name of FS.readdir(dir)) {
      if (name === '.' || name === '..' || keep.includes(name)) continue
      const path = dir + '/' + name
      const node = FS.lookupPath(path, { follow: false }).node
      if (FS.isDir(node.mode)) {
        removeTree(path)
        FS.rmdir(path)
      } else FS.unlink(path)
    }
  }
  // What the job's `fetch` pairs name: { files, errors }, each file read only when its real path is
  // in a place (a link out of them is refused) and it is a regular file of at most 16 MiB.
  const fetchFiles = (fetch) => {
    const files = {}
    const errors = {}
    for (const [asked, path] of fetch) {
      let node
      try {
        node = FS.lookupPath(path, { follow: true }).node
      } catch (e) {
        errors[asked] = 'no such file'
        continue
      }
      if (!inPlaces(FS.getPath(node)))
        errors[asked] =
          JSON.stringify(asked) + ": a link leads out of the sandbox's writable places (" + PLACES.join(', ') + ')'
      else if (FS.isDir(node.mode)) errors[asked] = 'a directory'
      else if (!FS.isFile(node.mode)) errors[asked] = 'not a regular file'
      else if (size(node) > FETCH_MAX_BYTES) errors[asked] = 'larger than ' + FETCH_MAX_BYTES + ' bytes: not returned'
      else files[asked] = FS.readFile(FS.getPath(node))
    }
    return { files, errors }
  }
  // Writes a request's files (absolute paths in the places); the first that cannot be written (a
  // path of the same request is a file where a directory must be, or the reverse) as a message.
  const writeFiles = (files) => {
    for (const path of Object.keys(files)) {
      try {
        mkdirs(path.slice(0, path.lastIndexOf('/')))
        FS.writeFile(path, files[path])
      } catch (e) {
        return 'files: ' + JSON.stringify(path) + ' could not be written'
      }
    }
    return null
  }
  const mkdirs = (path) => {
    let at = ''
    for (const part of path.split('/').filter((p) => p !== '')) {
      at += '/' + part
      try {
        FS.mkdir(at)
      } catch (e) {
        /* exists */
      }
    }
  }

  const calibrate = (n) => {
    const counts = []
    for (let i = 0; i < n; i++) {
      FS.writeFile(SF + '/in.json', JSON.stringify({ code: 'pass', stdin: '' }))
      const before = counter.ffi
      run()
      counts.push(counter.ffi - before)
      FS.unlink(SF + '/out.json')
      FS.unlink(SF + '/in.json')
    }
    return counts
  }

  // The baseline: the memory image after the harness ran a job (so a job's first call finds
  // nothing new to initialise), the FS fingerprint, open streams and cwd.
  const counts = calibrate(3)
  if (new Set(counts).size !== 1)
    throw new Error('the job runner does not touch JavaScript a fixed number of times: ' + counts.join(', '))
  const expectedFfi = counts[0]
  const baseCwd = FS.cwd()
  const baseFs = walk()
  const baseStreams = openStreams()
  const baseSbrk = sbrk()
  const baseline = M.HEAPU8.slice(0, baseSbrk)
  const baseBuffer = M.HEAPU8.length

  function job(code, stdin, files, fetch, maxOutputBytes, memoryBytes, entropy) {
    globalThis.__sf_entropy(entropy)
    streams.stdout = { parts: [], size: 0, cap: maxOutputBytes, truncated: false }
    streams.stderr = { parts: [], size: 0, cap: maxOutputBytes, truncated: false }
    FS.writeFile(SF + '/in.json', JSON.stringify({ code, stdin }))
    const unwritten = writeFiles(files)
    let outcome = null
    let crashed = null
    let ffi = expectedFfi
    if (unwritten !== null) outcome = { status: 'error', exit_code: 1, error: { type: 'OSError', message: unwritten } }
    else {
      Atomics.store(interrupt, 0, 0)
      growLimit = baseSbrk + memoryBytes
      fileCap = maxFileBytes
      quota = maxJobFileBytes
      held = 0
      const before = counter.ffi
      try {
        run()
      } catch (e) {
        crashed = String(e && e.message ? e.message : e).slice(0, 2000)
      }
      ffi = counter.ffi - before
      growLimit = 0
      fileCap = Infinity
      quota = Infinity
      try {
        outcome = JSON.parse(decoder.decode(FS.readFile(SF + '/out.json')))
      } catch (e) {
        /* no outcome: crashed */
      }
    }
    const fetched = fetchFiles(fetch)
    const result = {
      outcome,
      crashed,
      stdout: text(streams.stdout),
      stderr: text(streams.stderr),
      truncated: { stdout: streams.stdout.truncated, stderr: streams.stderr.truncated },
      files: fetched.files,
      fetchErrors: fetched.errors,
      clean: true,
      why: '',
      reason: ''
    }
    streams.stdout = null
    streams.stderr = null
    // What the memory image does not hold: the JavaScript side and the file system.
    if (ffi !== expectedFfi) {
      result.clean = false
      result.why = 'the job used the JavaScript FFI (' + (ffi - expectedFfi) + ' calls)'
      result.reason = 'ffi'
    }
    try {
      removeTree(WORK)
      removeTree(SF)
      for (const [dir, keep] of SCRATCH) empty(dir, keep)
      if (
        !FS.isDir(FS.lookupPath(WORK, { follow: false }).node.mode) ||
        !FS.isDir(FS.lookupPath(SF, { follow: false }).node.mode)
      )
        throw new Error('/tmp/work or /tmp/.sf is not a directory')
      FS.streams.forEach((s, fd) => {
        if (s && !baseStreams.has(fd)) FS.close(s)
      })
      for (const [fd, position] of baseStreams) {
        const s = FS.streams[fd]
        if (!s) {
          result.clean = false
          result.why ||= 'a baseline stream was closed'
          result.reason ||= 'files'
        } else s.position = position
      }
      FS.chdir(baseCwd)
      if (result.clean && walk() !== baseFs) {
        result.clean = false
        result.why = 'the job changed the file system outside its working directory'
        result.reason = 'files'
      }
    } catch (e) {
      result.clean = false
      result.why ||= 'the file system could not be reset: ' + e.message
      result.reason ||= 'cleanup'
    }
    if (crashed !== null) {
      result.clean = false
      result.why ||= 'the interpreter failed: ' + crashed
      result.reason ||= 'broken'
    }
    if (M.HEAPU8.length > baseBuffer + 64 * 1024 * 1024) {
      result.clean = false
      result.why ||= 'the wasm memory grew by more than 64 MiB'
      result.reason ||= 'grown'
    }
    return result
  }

  function restore() {
    const hi = sbrk()
    const heap = M.HEAPU8
    heap.set(baseline, 0)
    if (hi > baseline.length) heap.fill(0, baseline.length, hi)
  }

  function partial() {
    const s = streams
    return {
      stdout: s.stdout === null ? '' : text(s.stdout),
      stderr: s.stderr === null ? '' : text(s.stderr),
      truncated: { stdout: s.stdout?.truncated ?? false, stderr: s.stderr?.truncated ?? false }
    }
  }

  return { job, partial, restore, info: { baselineBytes: baseline.length, bufferBytes: baseBuffer, expectedFfi } }
})()
