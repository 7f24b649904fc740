/**
 * Python that tries to get hold of every other process it can see in its sandbox: PTRACE_ATTACH
 * (detaching again at once when it succeeds), opening `/proc/PID/mem` for reading and for writing,
 * and process_vm_readv. It prints one line per success, then `done`: a sandbox that holds
 * prints only `done`. (A process left attachable, such as an init that outlives the job, is a
 * foothold into the jobs that run after.)
 */
export const PTRACE_PROBE = `import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.restype = ctypes.c_long
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
class IoVec(ctypes.Structure): _fields_ = [('base', ctypes.c_void_p), ('len', ctypes.c_size_t)]
libc.process_vm_readv.restype = ctypes.c_ssize_t
libc.process_vm_readv.argtypes = [ctypes.c_int, ctypes.POINTER(IoVec), ctypes.c_ulong, ctypes.POINTER(IoVec), ctypes.c_ulong, ctypes.c_ulong]
buf = ctypes.create_string_buffer(8)
me = os.getpid()
for pid in sorted(int(p) for p in os.listdir('/proc') if p.isdigit()):
    if pid == me: continue
    try: comm = open('/proc/%d/comm' % pid).read().strip()
    except OSError: continue
    if libc.ptrace(16, pid, None, None) == 0:
        print('attached to', pid, comm)
        try: os.waitpid(pid, 0x40000000)
        except OSError: pass
        libc.ptrace(17, pid, None, None)
    for mode, name in ((os.O_RDONLY, 'read'), (os.O_RDWR, 'write')):
        try: os.close(os.open('/proc/%d/mem' % pid, mode)); print('opened /proc/%d/mem to %s' % (pid, name), comm)
        except OSError: pass
    try: start = int(open('/proc/%d/maps' % pid).readline().split('-')[0], 16)
    except (OSError, ValueError): start = 0x400000
    local, remote = IoVec(ctypes.addressof(buf), 8), IoVec(start, 8)
    if libc.process_vm_readv(pid, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0) > 0: print('read the memory of', pid, comm)
print('done')
`
