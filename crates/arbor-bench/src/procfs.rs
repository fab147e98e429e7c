//! Reading Linux's /proc, once for every tool of the workspace (the replay's metrics,
//! iobench, the peer comparison, the snapshot benchmark). Every reader returns `None` (or
//! zero where documented) where /proc or the field is missing, so that a measurement on
//! another system degrades to "unknown" instead of failing.

use std::path::Path;

/// The text of a /proc file, or `None`.
pub fn read(path: impl AsRef<Path>) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

/// The value of the line `key: value` in `text` (the format of /proc/self/io, status and
/// meminfo), trimmed.
pub fn field<'t>(text: &'t str, key: &str) -> Option<&'t str> {
    text.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        (k.trim_end() == key).then(|| v.trim())
    })
}

/// The number at the start of field `key` of `text` (units such as `kB` after it are left
/// to the caller).
pub fn field_u64(text: &str, key: &str) -> Option<u64> {
    field(text, key)?.split_whitespace().next()?.parse().ok()
}

/// The number at the start of field `key` of the file at `path`.
pub fn file_field_u64(path: impl AsRef<Path>, key: &str) -> Option<u64> {
    field_u64(&read(path)?, key)
}

/// A field of /proc/self/status given in kB (`VmRSS`, `VmHWM`, …), in bytes.
pub fn status_bytes(key: &str) -> Option<u64> {
    Some(file_field_u64("/proc/self/status", key)? * 1024)
}

/// A field of /proc/meminfo (`MemTotal`, `Cached`, …), in bytes.
pub fn meminfo_bytes(key: &str) -> Option<u64> {
    Some(file_field_u64("/proc/meminfo", key)? * 1024)
}

/// User and system CPU time of this process, in clock ticks (fields 14 and 15 of
/// /proc/self/stat).
pub fn cpu_ticks() -> Option<(u64, u64)> {
    let [utime, stime] = self_stat_fields([14, 15])?;
    Some((utime, stime))
}

/// Numeric fields of /proc/self/stat, by number (counted from 1, as proc(5) does; at least
/// 3), read at once.
fn self_stat_fields<const N: usize>(numbers: [usize; N]) -> Option<[u64; N]> {
    let text = read("/proc/self/stat")?;
    // The command name (field 2) may hold spaces; the fields after it start past its ')'.
    let fields: Vec<&str> = text.rsplit_once(')')?.1.split_whitespace().collect();
    let mut out = [0; N];
    for (o, n) in out.iter_mut().zip(numbers) {
        *o = fields.get(n.checked_sub(3)?)?.parse().ok()?;
    }
    Some(out)
}

/// Minor page faults of this process so far: pages it touched for the first time, which
/// the kernel had to map (and zero) then (field 10 of /proc/self/stat).
pub fn minor_faults() -> Option<u64> {
    let [minflt] = self_stat_fields([10])?;
    Some(minflt)
}

/// Resident pages of this process, and of them those backed by a file (mapped files, shared
/// memory): the second and third fields of /proc/self/statm.
pub fn resident_pages() -> Option<(u64, u64)> {
    let text = read("/proc/self/statm")?;
    let mut fields = text.split_whitespace().skip(1).map(|f| f.parse().ok());
    Some((fields.next()??, fields.next()??))
}

/// The running kernel's release (`/proc/sys/kernel/osrelease`).
pub fn kernel_release() -> Option<String> {
    Some(read("/proc/sys/kernel/osrelease")?.trim().to_string())
}

/// The CPU's model name (the first `model name` of /proc/cpuinfo).
pub fn cpu_model() -> Option<String> {
    Some(field(&read("/proc/cpuinfo")?, "model name")?.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_by_exact_key() {
        let text = "rchar: 12\nread_bytes: 7\nwrite_bytes:\t9 kB\n";
        assert_eq!(field_u64(text, "rchar"), Some(12));
        assert_eq!(field_u64(text, "read_bytes"), Some(7));
        assert_eq!(field_u64(text, "write_bytes"), Some(9));
        assert_eq!(field_u64(text, "bytes"), None);
        assert_eq!(field(text, "missing"), None);
    }

    #[test]
    fn this_process_is_readable_on_linux() {
        if !Path::new("/proc/self/stat").exists() {
            return;
        }
        assert!(cpu_ticks().is_some());
        assert!(resident_pages().is_some_and(|(all, file)| all > 0 && file <= all));
        assert!(status_bytes("VmRSS").is_some_and(|b| b > 0));
        assert!(meminfo_bytes("MemTotal").is_some_and(|b| b > 0));
        assert!(kernel_release().is_some_and(|k| !k.is_empty()));
    }

    #[test]
    fn touching_fresh_memory_counts_page_faults() {
        let Some(before) = minor_faults() else { return };
        // 32 MiB of non-zero bytes: every page is written, each for the first time (an
        // allocation this large is a fresh mapping, not reused memory).
        let touched = vec![1u8; 32 << 20];
        let after = minor_faults().expect("read before");
        std::hint::black_box(&touched);
        let pages = (32 << 20) / rustix::param::page_size() as u64;
        // Transparent huge pages may map 512 pages in one fault: at least one fault per 2 MiB.
        assert!(after - before >= pages / 512, "{} faults for {pages} pages", after - before);
    }
}
