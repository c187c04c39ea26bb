//! `--svg DIR`: latency distribution charts, hand-written SVG (no charting
//! dependency). One chart per result with a distribution, and one with
//! every series of the run. The x axis is the percentile on the usual
//! "tail" scale — log10(1 / (1 − p)) — so p50, p90, p99, p99.9 and p99.99
//! are evenly spaced; the y axis is latency in ms, linear from 0.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::report::Report;
use crate::stats::Quantile;

/// One line of a chart.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub name: String,
    pub points: Vec<Quantile>,
}

const WIDTH: f64 = 720.0;
const HEIGHT: f64 = 420.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 190.0;
const TOP: f64 = 40.0;
const BOTTOM: f64 = 50.0;
/// The rightmost percentile shown: p99.99 (x = 4).
const MAX_X: f64 = 4.0;
const COLORS: [&str; 8] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
];

/// The tail scale of percentile `p` (0..=100), capped at p99.99.
pub fn tail_x(p: f64) -> f64 {
    let rest = (100.0 - p.clamp(0.0, 100.0)) / 100.0;
    if rest <= 0.0 {
        return MAX_X;
    }
    (1.0 / rest).log10().min(MAX_X)
}

/// A "nice" axis maximum at or above `v`: 1, 2 or 5 × 10^k.
pub fn nice_max(v: f64) -> f64 {
    if !v.is_finite() || v <= 0.0 {
        return 1.0;
    }
    let magnitude = 10f64.powf(v.log10().floor());
    for step in [1.0, 2.0, 5.0, 10.0] {
        if step * magnitude >= v {
            return step * magnitude;
        }
    }
    10.0 * magnitude
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The chart of `series` under `title`.
pub fn chart(title: &str, series: &[Series]) -> String {
    let plot_w = WIDTH - LEFT - RIGHT;
    let plot_h = HEIGHT - TOP - BOTTOM;
    let y_max = nice_max(
        series
            .iter()
            .flat_map(|s| s.points.iter())
            .filter(|q| q.percentile <= 99.99)
            .map(|q| q.ms)
            .fold(0.0, f64::max),
    );
    let x_of = |p: f64| LEFT + tail_x(p) / MAX_X * plot_w;
    let y_of = |ms: f64| TOP + plot_h - (ms.min(y_max) / y_max) * plot_h;
    let mut out = String::new();
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(
        out,
        r#"<rect x="0" y="0" width="{WIDTH}" height="{HEIGHT}" fill="white"/>"#
    );
    let _ = writeln!(
        out,
        r#"<text x="{}" y="22" font-size="15" text-anchor="middle">{}</text>"#,
        LEFT + plot_w / 2.0,
        escape(title)
    );
    // Grid and axes.
    for i in 0..=5 {
        let ms = y_max * f64::from(i) / 5.0;
        let y = y_of(ms);
        let _ = writeln!(
            out,
            r##"<line x1="{LEFT}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#ddd"/><text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"##,
            LEFT + plot_w,
            LEFT - 6.0,
            y + 4.0,
            trim_number(ms)
        );
    }
    for (p, name) in [
        (0.0, "p0"),
        (90.0, "p90"),
        (99.0, "p99"),
        (99.9, "p99.9"),
        (99.99, "p99.99"),
    ] {
        let x = x_of(p);
        let _ = writeln!(
            out,
            r##"<line x1="{x:.1}" y1="{TOP}" x2="{x:.1}" y2="{:.1}" stroke="#ddd"/><text x="{x:.1}" y="{:.1}" text-anchor="middle">{name}</text>"##,
            TOP + plot_h,
            TOP + plot_h + 18.0
        );
    }
    let _ = writeln!(
        out,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">percentile</text>"#,
        LEFT + plot_w / 2.0,
        HEIGHT - 8.0
    );
    let _ = writeln!(
        out,
        r#"<text x="16" y="{:.1}" text-anchor="middle" transform="rotate(-90 16 {:.1})">latency (ms)</text>"#,
        TOP + plot_h / 2.0,
        TOP + plot_h / 2.0
    );
    for (index, s) in series.iter().enumerate() {
        let color = COLORS[index % COLORS.len()];
        let points: Vec<String> = s
            .points
            .iter()
            .filter(|q| q.percentile <= 99.99)
            .map(|q| format!("{:.1},{:.1}", x_of(q.percentile), y_of(q.ms)))
            .collect();
        let _ = writeln!(
            out,
            r#"<polyline fill="none" stroke="{color}" stroke-width="2" points="{}"/>"#,
            points.join(" ")
        );
        let y = TOP + 14.0 + 18.0 * index as f64;
        let x = WIDTH - RIGHT + 12.0;
        let _ = writeln!(
            out,
            r#"<line x1="{x:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="{color}" stroke-width="2"/><text x="{:.1}" y="{y:.1}">{}</text>"#,
            y - 4.0,
            x + 18.0,
            y - 4.0,
            x + 24.0,
            escape(&s.name)
        );
    }
    out.push_str("</svg>\n");
    out
}

fn trim_number(v: f64) -> String {
    let text = format!("{v:.3}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// Every latency distribution of `report`, named by result label.
pub fn series_of(report: &Report) -> Vec<Series> {
    let mut out = Vec::new();
    for r in &report.results {
        if let Some(load) = &r.load {
            if !load.distribution.is_empty() {
                out.push(Series {
                    name: r.label.clone(),
                    points: load.distribution.clone(),
                });
            }
        }
        if let Some(mix) = &r.mix {
            for (name, load) in [("create", &mix.creates), ("status", &mix.status_updates)] {
                if !load.distribution.is_empty() {
                    out.push(Series {
                        name: format!("{} {name}", r.label),
                        points: load.distribution.clone(),
                    });
                }
            }
            if !mix.delivery_distribution.is_empty() {
                out.push(Series {
                    name: format!("{} watch delivery", r.label),
                    points: mix.delivery_distribution.clone(),
                });
            }
        }
    }
    out
}

/// A file name for `label`: lowercase letters, digits and dashes.
pub fn slug(label: &str) -> String {
    let mut out = String::new();
    for c in label.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_matches('-').to_string()
}

/// Writes `latency.svg` (all series) and one `<label>.svg` per series
/// into `dir`; returns the files written.
pub fn write_charts(report: &Report, dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let series = series_of(report);
    if series.is_empty() {
        return Ok(Vec::new());
    }
    std::fs::create_dir_all(dir)?;
    let mut written = Vec::new();
    let all = dir.join("latency.svg");
    std::fs::write(&all, chart("latency distribution", &series))?;
    written.push(all);
    for s in &series {
        let path = dir.join(format!("{}.svg", slug(&s.name)));
        std::fs::write(&path, chart(&s.name, std::slice::from_ref(s)))?;
        written.push(path);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(name: &str, scale: f64) -> Series {
        Series {
            name: name.into(),
            points: crate::stats::DISTRIBUTION_PERCENTILES
                .iter()
                .map(|&p| Quantile {
                    percentile: p,
                    ms: scale * (1.0 + p / 10.0),
                })
                .collect(),
        }
    }

    #[test]
    fn tail_scale_spaces_the_nines_evenly() {
        assert_eq!(tail_x(0.0), 0.0);
        assert!((tail_x(90.0) - 1.0).abs() < 1e-9);
        assert!((tail_x(99.0) - 2.0).abs() < 1e-9);
        assert!((tail_x(99.9) - 3.0).abs() < 1e-9);
        assert_eq!(tail_x(100.0), MAX_X);
    }

    #[test]
    fn nice_axis_maxima() {
        assert_eq!(nice_max(0.0), 1.0);
        assert_eq!(nice_max(0.7), 1.0);
        assert_eq!(nice_max(1.3), 2.0);
        assert_eq!(nice_max(3.0), 5.0);
        assert_eq!(nice_max(51.0), 100.0);
        assert_eq!(nice_max(f64::NAN), 1.0);
    }

    #[test]
    fn chart_shape() {
        let svg = chart(
            "get <fsync=on> & more",
            &[series("a", 1.0), series("b", 2.0)],
        );
        assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
        assert!(svg.trim_end().ends_with("</svg>"));
        assert_eq!(svg.matches("<polyline").count(), 2);
        assert!(svg.contains("get &lt;fsync=on&gt; &amp; more"));
        assert!(svg.contains(">p99.9<"));
        // Every element opened is closed: tags balance.
        assert_eq!(svg.matches('<').count(), svg.matches('>').count());
        assert_eq!(svg.matches("<text").count(), svg.matches("</text>").count());
        // p100 is past the axis: 12 of the 13 points are drawn.
        let line = svg
            .lines()
            .find(|l| l.starts_with("<polyline"))
            .expect("polyline");
        let points = line.split("points=\"").nth(1).expect("points");
        assert_eq!(points.split_whitespace().count(), 12);
        // Coordinates stay inside the canvas.
        for pair in points.trim_end_matches("\"/>").split_whitespace() {
            let (x, y) = pair.split_once(',').expect("x,y");
            let (x, y): (f64, f64) = (x.parse().expect("x"), y.parse().expect("y"));
            assert!(
                (0.0..=WIDTH).contains(&x) && (0.0..=HEIGHT).contains(&y),
                "{pair}"
            );
        }
    }

    #[test]
    fn slugs() {
        assert_eq!(slug("create fsync=on"), "create-fsync-on");
        assert_eq!(
            slug("patch apply deployment-50"),
            "patch-apply-deployment-50"
        );
        assert_eq!(slug("  mix watch delivery "), "mix-watch-delivery");
    }
}
