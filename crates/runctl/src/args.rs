//! The command-line arguments of run control: `--fast-forward insns=N|marker`,
//! `--sample period=N,detail=M[,warmup=W]`, `insns=N`, and the points
//! `insns=N|time=NS` of `--crash-at` and `--checkpoint-at`.

use crate::{FastForward, Sampling, StopAt};

/// Parses a [`StopAt`]: `insns=N` (N >= 1) or `time=NS` (simulated
/// nanoseconds); `_` may group digits.
pub fn parse_stop_at(s: &str) -> Result<StopAt, String> {
    let bad = || format!("'{s}' is not insns=N or time=NS (simulated nanoseconds)");
    let (key, value) = s.split_once('=').ok_or_else(bad)?;
    let n: u64 = value.trim().replace('_', "").parse().map_err(|_| bad())?;
    match key.trim() {
        "insns" if n > 0 => Ok(StopAt::Insns(n)),
        "insns" => Err("insns=N needs N >= 1".into()),
        "time" => Ok(StopAt::TimeNs(n)),
        _ => Err(bad()),
    }
}

/// Parses `--fast-forward insns=N|marker`.
pub fn parse_fast_forward(s: &str) -> Result<FastForward, String> {
    if s == "marker" {
        return Ok(FastForward::Marker);
    }
    parse_insns(s)
        .map(FastForward::Insns)
        .map_err(|_| format!("wants insns=N or marker, got '{s}'"))
}

/// Parses `--sample period=N,detail=M[,warmup=W]` (instruction counts,
/// in any order; warmup 0 by default).
pub fn parse_sample(s: &str) -> Result<Sampling, String> {
    let (mut period, mut detail, mut warmup) = (None, None, None);
    for part in s.split(',') {
        let (key, value) = part
            .split_once('=')
            .ok_or_else(|| format!("wants period=N,detail=M[,warmup=W], got '{part}'"))?;
        let slot = match key {
            "period" => &mut period,
            "detail" => &mut detail,
            "warmup" => &mut warmup,
            _ => {
                return Err(format!(
                    "unknown key '{key}': wants period=N,detail=M[,warmup=W]"
                ))
            }
        };
        if slot.is_some() {
            return Err(format!("'{key}' given twice"));
        }
        *slot = Some(
            value
                .parse::<u64>()
                .map_err(|_| format!("{key} wants an instruction count, got '{value}'"))?,
        );
    }
    match (period, detail) {
        (Some(p), Some(d)) => Sampling::new(p, d, warmup.unwrap_or(0)),
        _ => Err(format!(
            "wants period=N,detail=M[,warmup=W] (period and detail are needed), got '{s}'"
        )),
    }
}

/// Parses `insns=N`.
pub fn parse_insns(s: &str) -> Result<u64, String> {
    match s.strip_prefix("insns=").map(str::parse::<u64>) {
        Some(Ok(n)) => Ok(n),
        _ => Err(format!("wants insns=N, got '{s}'")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_at_arguments() {
        assert_eq!(parse_stop_at("insns=1_000"), Ok(StopAt::Insns(1000)));
        assert_eq!(parse_stop_at("time=5000"), Ok(StopAt::TimeNs(5000)));
        assert!(parse_stop_at("insns=0").is_err());
        assert!(parse_stop_at("cycles=3").unwrap_err().contains("insns=N"));
        assert!(parse_stop_at("insns").is_err());
        assert!(parse_stop_at("time=-1").is_err());
    }

    #[test]
    fn fast_forward_arguments() {
        assert_eq!(parse_fast_forward("marker"), Ok(FastForward::Marker));
        assert_eq!(
            parse_fast_forward("insns=1000"),
            Ok(FastForward::Insns(1000))
        );
        for bad in ["insns=", "insns=-1", "time=5", "", "markers"] {
            assert!(parse_fast_forward(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn sample_arguments() {
        assert_eq!(
            parse_sample("period=1000,detail=100,warmup=50"),
            Sampling::new(1000, 100, 50)
        );
        assert_eq!(
            parse_sample("detail=10,period=20"),
            Sampling::new(20, 10, 0)
        );
        for bad in [
            "",
            "period=100",
            "detail=10",
            "period=100,detail=0",
            "period=100,detail=60,warmup=50",
            "period=100,detail=10,detail=10",
            "period=100,detail=x",
            "period=100,detail=10,other=1",
            "period=-1,detail=1",
            "period 100",
        ] {
            assert!(parse_sample(bad).is_err(), "{bad}");
        }
    }
}
