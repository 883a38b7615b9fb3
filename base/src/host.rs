//! Host and process identity: the names that leases, heartbeats and temporary files carry, so
//! that what a dead process left behind can be recognised and cleared.

use std::path::Path;

/// This host's name (`[A-Za-z0-9_-]`; `host` when it has none), as it appears in file names.
pub fn hostname() -> String {
    let h = std::fs::read_to_string("/proc/sys/kernel/hostname").or_else(|_| std::fs::read_to_string("/etc/hostname")).unwrap_or_default();
    let h: String = h.trim().chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).collect();
    if h.is_empty() {
        "host".into()
    } else {
        h
    }
}

/// True when process `pid` of host `host` is known to be gone: it is of this host and no such
/// process exists. A process of another host: false (nothing is known of it here).
pub fn process_gone(host: &str, pid: u32) -> bool {
    host == hostname() && !Path::new(&format!("/proc/{pid}")).exists()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_lives_and_names_are_file_safe() {
        let h = hostname();
        assert!(!h.is_empty() && h.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'), "{h}");
        assert!(!process_gone(&h, std::process::id()));
        assert!(!process_gone("another-host-entirely", 999_999_999));
        if Path::new("/proc/self").exists() {
            assert!(process_gone(&h, 999_999_999));
        }
    }
}
