//! A writer's report: its stdout lines (see `crate::child`), parsed.

/// One line of the writer's report, parsed.
#[derive(Default)]
pub(super) struct Report {
    pub(super) acked: Vec<usize>,
    pub(super) begun: Option<usize>,
    pub(super) kill: Option<String>,
    pub(super) torn: bool,
    /// Unsynced writes undone, for a power loss.
    pub(super) power: Option<u64>,
    pub(super) err: Option<String>,
    pub(super) unexpected: Option<String>,
    pub(super) done: bool,
    /// Absorbed failures: call, kind of file, fault.
    pub(super) absorbed: Vec<String>,
    /// Operations and mutations of a writer that finished.
    pub(super) done_ops: String,
}

pub(super) fn parse_report(out: &str) -> Report {
    let mut r = Report::default();
    for line in out.lines() {
        let (word, rest) = line.split_once(' ').unwrap_or((line, ""));
        match word {
            "BEGIN" => r.begun = rest.parse().ok(),
            "ACK" => r.acked.extend(rest.parse::<usize>().ok()),
            "KILL" => {
                // `KILL <op> <call> <file> <style>`: the point is the call, the kind of file
                // (digits dropped) and the style (lengths dropped).
                let w: Vec<&str> = rest.split(' ').collect();
                if let [_, call, file, style] = w.as_slice() {
                    let file: String = file.chars().filter(|c| !c.is_ascii_digit()).collect();
                    let (style, detail) = style.split_once(':').unwrap_or((style, ""));
                    r.torn = style == "torn";
                    if style == "power" {
                        r.power = detail.split_once('/').and_then(|(_, lost)| lost.parse().ok());
                    }
                    r.kill = Some(format!("{call} {file} {style}"));
                } else {
                    r.kill = Some(rest.to_string());
                }
            }
            "ERR" => r.err = Some(rest.to_string()),
            "ABSORBED" => {
                let w: Vec<&str> = rest.split(' ').collect();
                if let [_, call, file, fault] = w.as_slice() {
                    let file: String = file.chars().filter(|c| !c.is_ascii_digit()).collect();
                    r.absorbed.push(format!("{call} {file} {fault}"));
                }
            }
            "UNEXPECTED" => r.unexpected = Some(rest.to_string()),
            "DONE" => {
                r.done = true;
                r.done_ops = rest.to_string();
            }
            _ => {}
        }
    }
    r
}
