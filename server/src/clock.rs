//! The server's clock: the system time, or a fixed time that tests can move.

use std::sync::Mutex;

use chrono::{DateTime, NaiveDate, Utc};

#[derive(Default)]
pub struct Clock {
    fixed: Mutex<Option<DateTime<Utc>>>,
}

impl Clock {
    /// A clock stopped at `t` (tests).
    pub fn fixed(t: DateTime<Utc>) -> Self {
        Clock {
            fixed: Mutex::new(Some(t)),
        }
    }

    pub fn now(&self) -> DateTime<Utc> {
        self.fixed
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .unwrap_or_else(Utc::now)
    }

    pub fn today(&self) -> NaiveDate {
        self.now().date_naive()
    }

    /// Moves a fixed clock (no effect on the system clock).
    pub fn set(&self, t: DateTime<Utc>) {
        *self.fixed.lock().unwrap_or_else(|p| p.into_inner()) = Some(t);
    }
}
