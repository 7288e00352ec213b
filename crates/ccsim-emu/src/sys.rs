//! The Linux system calls the emulator needs: clocks, attaching to a TUN device inside a
//! network namespace, non-blocking packet I/O, ppoll with a nanosecond timeout, timer slack.
//! On other systems every entry point fails with `Unsupported`.

use std::io;

pub use imp::*;

#[cfg(target_os = "linux")]
mod imp {
    use std::ffi::CString;
    use std::io;
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

    fn clock(id: libc::clockid_t) -> u64 {
        let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: ts is a valid timespec; these clock ids always exist on Linux.
        unsafe { libc::clock_gettime(id, &mut ts) };
        ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
    }

    /// CLOCK_MONOTONIC in ns: one clock for every network namespace (and Python's
    /// `time.monotonic_ns`).
    pub fn monotonic_ns() -> u64 {
        clock(libc::CLOCK_MONOTONIC)
    }

    /// CPU time used by the calling thread (ns).
    pub fn thread_cpu_ns() -> u64 {
        clock(libc::CLOCK_THREAD_CPUTIME_ID)
    }

    fn last_error(context: impl FnOnce() -> String) -> io::Error {
        let e = io::Error::last_os_error();
        io::Error::new(e.kind(), format!("{}: {e}", context()))
    }

    // <linux/if_tun.h>: TUNSETIFF = _IOW('T', 202, int).
    const TUNSETIFF: libc::c_ulong = 0x4004_54ca;
    const IFF_TUN: libc::c_short = 0x0001;
    const IFF_NO_PI: libc::c_short = 0x1000;

    #[repr(C)]
    struct IfReq {
        name: [u8; libc::IFNAMSIZ],
        flags: libc::c_short,
        _pad: [u8; 22],
    }

    /// Attach to the persistent TUN device `device` inside the network namespace whose file
    /// is `netns` (e.g. `/var/run/netns/NAME`). The namespace is entered on a short-lived
    /// thread, so the caller's own namespace never changes; the returned descriptor stays
    /// bound to the device. Non-blocking, close-on-exec.
    pub fn open_tun(netns: &str, device: &str) -> io::Result<OwnedFd> {
        let (netns, device) = (netns.to_string(), device.to_string());
        std::thread::spawn(move || open_tun_here(&netns, &device))
            .join()
            .map_err(|_| io::Error::other("the TUN-attaching thread panicked"))?
    }

    fn open_tun_here(netns: &str, device: &str) -> io::Result<OwnedFd> {
        if device.is_empty() || device.len() >= libc::IFNAMSIZ {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("TUN device name {device:?} is not 1 to 15 bytes")));
        }
        let path = CString::new(netns).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "namespace path contains NUL"))?;
        // SAFETY: plain system calls on a valid C string and descriptors we own.
        unsafe {
            let raw = libc::open(path.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC);
            if raw < 0 {
                return Err(last_error(|| format!("cannot open network namespace {netns}")));
            }
            let ns = OwnedFd::from_raw_fd(raw);
            if libc::setns(ns.as_raw_fd(), libc::CLONE_NEWNET) != 0 {
                return Err(last_error(|| format!("cannot enter network namespace {netns}")));
            }
            let raw = libc::open(c"/dev/net/tun".as_ptr(), libc::O_RDWR | libc::O_NONBLOCK | libc::O_CLOEXEC);
            if raw < 0 {
                return Err(last_error(|| "cannot open /dev/net/tun".into()));
            }
            let tun = OwnedFd::from_raw_fd(raw);
            let mut req = IfReq { name: [0; libc::IFNAMSIZ], flags: IFF_TUN | IFF_NO_PI, _pad: [0; 22] };
            req.name[..device.len()].copy_from_slice(device.as_bytes());
            if libc::ioctl(tun.as_raw_fd(), TUNSETIFF as _, &mut req as *mut IfReq) != 0 {
                return Err(last_error(|| format!("cannot attach to TUN device {device} in {netns}")));
            }
            Ok(tun)
        }
    }

    /// Read one packet; `Ok(None)` when none is waiting.
    pub fn read_packet(fd: &OwnedFd, buf: &mut [u8]) -> io::Result<Option<usize>> {
        // SAFETY: buf is valid for buf.len() bytes.
        let n = unsafe { libc::read(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
        if n >= 0 {
            return Ok(Some(n as usize));
        }
        let e = io::Error::last_os_error();
        match e.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted => Ok(None),
            _ => Err(e),
        }
    }

    /// Write one packet (the kernel takes it whole or not at all).
    pub fn write_packet(fd: &OwnedFd, buf: &[u8]) -> io::Result<()> {
        // SAFETY: buf is valid for buf.len() bytes.
        let n = unsafe { libc::write(fd.as_raw_fd(), buf.as_ptr().cast(), buf.len()) };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Wait until one of `fds` is readable or `timeout_ns` passed. Returns which are readable;
    /// `Err(Interrupted)` when a signal arrived (so the caller can let Python handle it).
    pub fn wait_readable(fds: [&OwnedFd; 2], timeout_ns: u64) -> io::Result<[bool; 2]> {
        let mut p = [
            libc::pollfd { fd: fds[0].as_raw_fd(), events: libc::POLLIN, revents: 0 },
            libc::pollfd { fd: fds[1].as_raw_fd(), events: libc::POLLIN, revents: 0 },
        ];
        let ts = libc::timespec { tv_sec: (timeout_ns / 1_000_000_000) as _, tv_nsec: (timeout_ns % 1_000_000_000) as _ };
        // SAFETY: p and ts are valid for the call.
        let r = unsafe { libc::ppoll(p.as_mut_ptr(), 2, &ts, std::ptr::null()) };
        if r < 0 {
            return Err(io::Error::last_os_error());
        }
        let bad = libc::POLLERR | libc::POLLHUP | libc::POLLNVAL;
        for q in &p {
            if q.revents & bad != 0 {
                return Err(io::Error::other(format!("TUN descriptor {} reports an error (poll revents {:#x})", q.fd, q.revents)));
            }
        }
        Ok([p[0].revents & libc::POLLIN != 0, p[1].revents & libc::POLLIN != 0])
    }

    /// The calling thread under SCHED_FIFO at `priority` while this lives (then back to its
    /// own policy). Wake-ups then preempt ordinary processes, which on a busy machine keeps the
    /// hand-over lateness well below a millisecond. `entered` says whether it worked (it needs
    /// CAP_SYS_NICE); without it the emulator runs as an ordinary thread.
    pub struct Realtime {
        old: Option<(libc::c_int, libc::sched_param)>,
    }

    impl Realtime {
        pub fn enter(priority: Option<i32>) -> Realtime {
            let Some(prio) = priority else { return Realtime { old: None } };
            // SAFETY: scheduling calls on the calling thread (pid 0) with valid parameters.
            unsafe {
                let policy = libc::sched_getscheduler(0);
                let mut param = libc::sched_param { sched_priority: 0 };
                if policy < 0 || libc::sched_getparam(0, &mut param) != 0 {
                    return Realtime { old: None };
                }
                let rt = libc::sched_param { sched_priority: prio };
                if libc::sched_setscheduler(0, libc::SCHED_FIFO, &rt) != 0 {
                    return Realtime { old: None };
                }
                Realtime { old: Some((policy, param)) }
            }
        }

        pub fn entered(&self) -> bool {
            self.old.is_some()
        }
    }

    impl Drop for Realtime {
        fn drop(&mut self) {
            if let Some((policy, param)) = self.old {
                // SAFETY: as above.
                unsafe { libc::sched_setscheduler(0, policy, &param) };
            }
        }
    }

    /// The calling thread's timer slack set to 1 ns while this lives: a sleeping emulator
    /// wakes when asked, not up to 50 us later (the default slack).
    pub struct TimerSlack(libc::c_int);

    impl TimerSlack {
        pub fn tight() -> TimerSlack {
            // SAFETY: prctl with these options only reads/writes the thread's timer slack.
            unsafe {
                let prev = libc::prctl(libc::PR_GET_TIMERSLACK, 0, 0, 0, 0);
                libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0);
                TimerSlack(prev.max(1))
            }
        }
    }

    impl Drop for TimerSlack {
        fn drop(&mut self) {
            // SAFETY: as above.
            unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, self.0 as libc::c_ulong, 0, 0, 0) };
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    use std::io;
    use std::os::fd::OwnedFd;

    fn unsupported<T>() -> io::Result<T> {
        Err(io::Error::new(io::ErrorKind::Unsupported, "the link emulator needs Linux (network namespaces and TUN devices)"))
    }
    pub fn monotonic_ns() -> u64 {
        0
    }
    pub fn thread_cpu_ns() -> u64 {
        0
    }
    pub fn open_tun(_: &str, _: &str) -> io::Result<OwnedFd> {
        unsupported()
    }
    pub fn read_packet(_: &OwnedFd, _: &mut [u8]) -> io::Result<Option<usize>> {
        unsupported()
    }
    pub fn write_packet(_: &OwnedFd, _: &[u8]) -> io::Result<()> {
        unsupported()
    }
    pub fn wait_readable(_: [&OwnedFd; 2], _: u64) -> io::Result<[bool; 2]> {
        unsupported()
    }
    pub struct Realtime;
    impl Realtime {
        pub fn enter(_: Option<i32>) -> Realtime {
            Realtime
        }
        pub fn entered(&self) -> bool {
            false
        }
    }
    pub struct TimerSlack;
    impl TimerSlack {
        pub fn tight() -> TimerSlack {
            TimerSlack
        }
    }
}

/// Whether an error is a signal interrupting a wait.
pub fn interrupted(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::Interrupted
}
