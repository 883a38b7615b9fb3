//! The time manager of clock play (`go wtime … btime … winc … binc … [movestogo N]`).
//!
//! [`TimePlan::new`] turns the mover's clock into two limits. With `mtg` = the GUI's `movestogo`
//! (capped at [`HORIZON`]) or [`HORIZON`] (30) in sudden death, a *reserve* of
//! `overhead · (mtg + 2)` (the `Move Overhead` option, default 30 ms, for every move of the
//! horizon and two more, as Stockfish reserves it) is set aside for the latency of the moves to
//! come, and with `left` = remaining time − reserve:
//!
//! * **soft** = `left / mtg + 3/4 · increment`;
//! * **hard** = `3 · soft`;
//!
//! both capped at half of `left` (85% when `movestogo` is 1: the clock is refilled after the
//! move). No move takes more than a fixed fraction of what is left above the reserve, so that
//! part shrinks geometrically and the reserve pays the latencies: even if every move ran to its
//! hard limit (a tenth of `left` in sudden death) with 5 ms of latency on top, a 1+0 game of
//! 100 moves a side would end with more than 100 ms on the clock, and moves at the soft limit
//! that each cost the whole `Move Overhead` on top last 150 moves a side (see the tests). A
//! reserve of only ten moves' overhead flagged: a loaded machine's latency (15–30 ms a move)
//! emptied it in the long sudden-death games of `vzero/tests/uci_cli.rs`.
//!
//! During the search, [`TimePlan::should_stop`] decides:
//!
//! * at the hard limit: stop;
//! * before it, stop as soon as the second-best move cannot catch up with the best in the time
//!   left at the current speed (its visit deficit exceeds the simulations still possible);
//! * past the soft limit: stop when the position is *clear* — the best move has at least
//!   [`CLEAR_LEAD`] times the second's visits and has been the best during the last
//!   [`STABLE_FRACTION`] of the search — otherwise keep searching, up to the hard limit. So an
//!   unclear position gets up to three times the share a fixed fraction would give it.

use std::time::Duration;

/// Moves assumed left in sudden death (and the cap on `movestogo`).
pub const HORIZON: u32 = 30;
/// Past the soft limit, the best move is clear when it has this many times the second's visits.
pub const CLEAR_LEAD: f64 = 1.8;
/// … and has been the best during this last fraction of the search.
pub const STABLE_FRACTION: f64 = 0.3;

/// The mover's clock as the GUI reports it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Clock {
    /// Time left on the mover's clock.
    pub time: Duration,
    /// Increment per move.
    pub inc: Duration,
    /// Moves to the next time control (`movestogo`), if any.
    pub moves_to_go: Option<u32>,
}

/// Soft and hard time limits of one move.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TimePlan {
    /// Stop past this when the position is clear.
    pub soft: Duration,
    /// Never search longer than this.
    pub hard: Duration,
}

/// What the search looks like at a check of [`TimePlan::should_stop`].
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SearchState {
    /// Time spent on this move so far.
    pub elapsed: Duration,
    /// Visits of the most and the second most visited root moves.
    pub best_visits: u32,
    /// Visits of the second most visited root move.
    pub second_visits: u32,
    /// How long the current best move has been the best.
    pub best_for: Duration,
    /// Simulations per second so far.
    pub nps: f64,
}

impl TimePlan {
    /// The limits for a move with `clock`; `overhead` is the latency of one move (reading `go`,
    /// answering `bestmove`, the GUI's own delays), reserved for the moves to come.
    pub fn new(clock: &Clock, overhead: Duration) -> TimePlan {
        let mtg = clock.moves_to_go.map_or(HORIZON, |m| m.clamp(1, HORIZON)) as f64;
        let reserve = overhead.as_secs_f64() * (mtg + 2.0);
        let left = (clock.time.as_secs_f64() - reserve).max(0.0);
        let cap = if mtg <= 1.0 { 0.85 * left } else { 0.5 * left };
        let soft = (left / mtg + 0.75 * clock.inc.as_secs_f64()).min(cap);
        let hard = (3.0 * soft).min(cap).max(soft);
        TimePlan { soft: Duration::from_secs_f64(soft), hard: Duration::from_secs_f64(hard) }
    }

    /// Whether to stop now (see the module documentation).
    pub fn should_stop(&self, s: &SearchState) -> bool {
        if s.elapsed >= self.hard {
            return true;
        }
        let left = (self.hard - s.elapsed).as_secs_f64() * s.nps;
        if s.best_visits > 0 && f64::from(s.best_visits - s.second_visits.min(s.best_visits)) > left {
            return true;
        }
        if s.elapsed < self.soft {
            return false;
        }
        Self::is_clear(s)
    }

    /// Whether the best move is clear: far ahead of the second and stable.
    pub fn is_clear(s: &SearchState) -> bool {
        let lead = f64::from(s.best_visits) >= CLEAR_LEAD * f64::from(s.second_visits);
        let stable = s.best_for.as_secs_f64() >= STABLE_FRACTION * s.elapsed.as_secs_f64();
        lead && stable
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> Duration {
        Duration::from_millis(x)
    }

    #[test]
    fn plans_follow_the_clock() {
        let p = TimePlan::new(&Clock { time: ms(60_000), inc: ms(0), moves_to_go: None }, ms(30));
        assert!((p.soft.as_secs_f64() - 59.04 / 30.0).abs() < 1e-9);
        assert!((p.hard.as_secs_f64() - 3.0 * 59.04 / 30.0).abs() < 1e-9);
        let p = TimePlan::new(&Clock { time: ms(180_000), inc: ms(2000), moves_to_go: None }, ms(30));
        assert!((p.soft.as_secs_f64() - (179.04 / 30.0 + 1.5)).abs() < 1e-9);
        // little time left, big increment: never more than half of what is left
        let p = TimePlan::new(&Clock { time: ms(1000), inc: ms(2000), moves_to_go: None }, ms(30));
        assert!(p.hard <= Duration::from_secs_f64(0.7 * 0.5 + 1e-9));
        // the last move before the time control may use most of the clock
        let p = TimePlan::new(&Clock { time: ms(1000), inc: ms(0), moves_to_go: Some(1) }, ms(30));
        assert!(p.soft > ms(750) && p.hard < ms(900));
        // within the reserve (32 moves' overhead): nothing
        let p = TimePlan::new(&Clock { time: ms(950), inc: ms(0), moves_to_go: None }, ms(30));
        assert_eq!((p.soft, p.hard), (Duration::ZERO, Duration::ZERO));
    }

    #[test]
    fn every_move_at_the_hard_limit_still_keeps_time() {
        // 1+0 and 3+2, 100 moves each side, every move using its hard limit plus 5 ms of latency
        for (start, inc) in [(60_000u64, 0u64), (180_000, 2000)] {
            let mut t = ms(start);
            for _ in 0..100 {
                let p = TimePlan::new(&Clock { time: t, inc: ms(inc), moves_to_go: None }, ms(30));
                t = t.checked_sub(p.hard + ms(5)).expect("lost on time") + ms(inc);
            }
            assert!(t > ms(100), "{start}+{inc}: {t:?} left");
        }
    }

    #[test]
    fn moves_that_each_cost_the_whole_overhead_still_keep_time() {
        // 1+0, every move at its soft limit plus the full Move Overhead of latency (a loaded
        // machine, a distant server): 150 moves a side and time left
        let mut t = ms(60_000);
        for mv in 0..150 {
            let p = TimePlan::new(&Clock { time: t, inc: ms(0), moves_to_go: None }, ms(30));
            t = t.checked_sub(p.soft + ms(30)).unwrap_or_else(|| panic!("lost on time at move {mv}"));
        }
        assert!(t > Duration::ZERO);
    }

    #[test]
    fn clear_positions_stop_at_the_soft_limit_unclear_ones_go_on() {
        let p = TimePlan { soft: ms(1000), hard: ms(3000) };
        let at = |elapsed, best, second, best_for| SearchState {
            elapsed: ms(elapsed),
            best_visits: best,
            second_visits: second,
            best_for: ms(best_for),
            nps: 1000.0,
        };
        assert!(!p.should_stop(&at(900, 900, 10, 900)), "before the soft limit");
        assert!(p.should_stop(&at(1000, 900, 100, 900)), "clear: stop at the soft limit");
        assert!(!p.should_stop(&at(1000, 500, 450, 900)), "close second: go on");
        assert!(!p.should_stop(&at(1500, 900, 100, 200)), "best just changed: go on");
        assert!(p.should_stop(&at(3000, 500, 450, 900)), "hard limit");
        // the second can no longer catch up: 2000 visits behind with 1 s at 1000 sims/s left
        assert!(p.should_stop(&at(2000, 2500, 400, 100)));
    }
}
