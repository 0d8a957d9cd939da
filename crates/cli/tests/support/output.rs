//! What a finished command printed, for the integration tests that check
//! it. Included with `#[path]` by the tests that need it.

/// The stdout of a run that must have succeeded (else both streams in the
/// failure).
pub fn success_stdout(o: &std::process::Output) -> String {
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        o.status.success(),
        "{out}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    out
}
