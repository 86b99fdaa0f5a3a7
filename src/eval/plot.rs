//! A grouped bar chart of original vs estimated answers per group, as a standalone SVG.
//! Hand-written: a chart of two series needs a few dozen elements, not a plotting crate.

use super::report::{Presence, QueryReport};
use std::fmt::Write;

const HEIGHT: f64 = 440.0;
const LEFT: f64 = 80.0;
const RIGHT: f64 = 30.0;
const TOP: f64 = 60.0;
const BOTTOM: f64 = 110.0;
const ORIGINAL: &str = "#1f77b4";
const ESTIMATE: &str = "#ff7f0e";
/// Backgrounds of the groups only one side has.
const MISSING: &str = "#e8e8e8";
const SPURIOUS: &str = "#fde0dd";

/// The SVG text of the chart; `title` is shown on top, `y_label` on the value axis.
pub fn svg(report: &QueryReport, title: &str, y_label: &str) -> String {
    let n = report.groups.len().max(1);
    let slot = (720.0 / n as f64).clamp(18.0, 60.0);
    let width = LEFT + RIGHT + slot * n as f64;
    let plot_h = HEIGHT - TOP - BOTTOM;
    let base = TOP + plot_h;
    let max = report.groups.iter().flat_map(|g| [g.original, g.estimate]).flatten().fold(0.0f64, f64::max);
    let (top, step) = nice_scale(max);
    let y = |v: f64| TOP + plot_h * (1.0 - v / top);
    let mut s = String::new();
    let _ = writeln!(
        s,
        concat!(
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0}" height="{height:.0}" "#,
            r#"viewBox="0 0 {width:.0} {height:.0}" font-family="sans-serif" font-size="12">"#
        ),
        width = width,
        height = HEIGHT
    );
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
    text(&mut s, width / 2.0, 24.0, "middle", r#" font-size="15""#, title);
    // Value axis: gridlines and tick labels.
    let mut v = 0.0;
    while v <= top + step * 1e-9 {
        line(&mut s, (LEFT, y(v)), (width - RIGHT, y(v)), "#ddd");
        text(&mut s, LEFT - 6.0, y(v) + 4.0, "end", "", &tick(v));
        v += step;
    }
    line(&mut s, (LEFT, TOP), (LEFT, base), "black");
    line(&mut s, (LEFT, base), (width - RIGHT, base), "black");
    for (i, g) in report.groups.iter().enumerate() {
        let x0 = LEFT + slot * i as f64;
        mark_presence(&mut s, g.presence, x0, slot, plot_h, &g.key);
        let bar = slot * 0.38;
        for (k, (value, color)) in [(g.original, ORIGINAL), (g.estimate, ESTIMATE)].into_iter().enumerate() {
            if let Some(v) = value {
                let x = x0 + slot * 0.12 + bar * k as f64;
                let (top_y, h) = (y(v), (base - y(v)).max(0.0));
                let _ = writeln!(
                    s,
                    concat!(
                        r#"<rect x="{x:.1}" y="{top_y:.1}" width="{bar:.1}" height="{h:.1}" fill="{color}">"#,
                        "<title>{key}: {v:.3}</title></rect>"
                    ),
                    x = x,
                    top_y = top_y,
                    bar = bar,
                    h = h,
                    color = color,
                    key = esc(&g.key),
                    v = v
                );
            }
        }
        let (lx, ly) = (x0 + slot / 2.0, base + 14.0);
        text(&mut s, lx, ly, "end", &format!(r#" transform="rotate(-45 {lx:.1} {ly:.1})""#), &g.key);
    }
    text(&mut s, LEFT + (width - LEFT - RIGHT) / 2.0, HEIGHT - 12.0, "middle", "", "group");
    let mid = TOP + plot_h / 2.0;
    text(&mut s, 18.0, mid, "middle", &format!(r#" transform="rotate(-90 18 {mid:.1})""#), y_label);
    legend(&mut s, width);
    s.push_str("</svg>\n");
    s
}

/// A shaded band behind a group the estimate lacks (missing) or invents (spurious), its
/// status written down the band: a bar of 0 and an absent bar look alike otherwise.
fn mark_presence(s: &mut String, presence: Presence, x0: f64, slot: f64, plot_h: f64, key: &str) {
    let shade = match presence {
        Presence::Both => return,
        Presence::Missing => MISSING,
        Presence::Spurious => SPURIOUS,
    };
    let name = presence.name();
    let _ = writeln!(
        s,
        r#"<rect class="{name}" x="{x0:.1}" y="{TOP:.1}" width="{slot:.1}" height="{plot_h:.1}" fill="{shade}"><title>{}: {name}</title></rect>"#,
        esc(key)
    );
    let (tx, ty) = (x0 + slot / 2.0 + 3.0, TOP + 4.0);
    text(s, tx, ty, "end", &format!(r#" font-size="9" transform="rotate(-90 {tx:.1} {ty:.1})""#), name);
}

fn line(s: &mut String, (x1, y1): (f64, f64), (x2, y2): (f64, f64), stroke: &str) {
    let _ = writeln!(s, r#"<line x1="{x1:.1}" y1="{y1:.1}" x2="{x2:.1}" y2="{y2:.1}" stroke="{stroke}"/>"#);
}

/// A text element; `extra` holds further attributes (with a leading space).
fn text(s: &mut String, x: f64, y: f64, anchor: &str, extra: &str, content: &str) {
    let _ = writeln!(s, r#"<text x="{x:.1}" y="{y:.1}" text-anchor="{anchor}"{extra}>{}</text>"#, esc(content));
}

fn legend(s: &mut String, width: f64) {
    let x = width - RIGHT - 150.0;
    for (k, (name, color)) in [("original", ORIGINAL), ("estimate", ESTIMATE)].into_iter().enumerate() {
        let yk = 38.0 + 16.0 * k as f64;
        let _ = writeln!(s, r#"<rect x="{x:.1}" y="{:.1}" width="12" height="12" fill="{color}"/>"#, yk - 10.0);
        text(s, x + 18.0, yk, "start", "", name);
    }
}

/// A round upper bound and tick step (1, 2 or 5 times a power of ten) for about 5 ticks.
fn nice_scale(max: f64) -> (f64, f64) {
    if max <= 0.0 || !max.is_finite() {
        return (1.0, 0.2);
    }
    let raw = max / 5.0;
    let p = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0].into_iter().map(|m| m * p).find(|s| *s >= raw).unwrap_or(10.0 * p);
    ((max / step).ceil() * step, step)
}

fn tick(v: f64) -> String {
    if v.fract() == 0.0 { format!("{v:.0}") } else { format!("{}", (v * 1e6).round() / 1e6) }
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::super::report::GroupError;
    use super::*;

    #[test]
    fn bars_labels_and_legend() {
        let g = |k: &str, o, e| GroupError::both(k, o, e);
        let r =
            QueryReport { query: String::new(), groups: vec![g("35", 3.0, 2.5), g("40", 7.0, 8.0)], additive: true };
        let s = svg(&r, "Q <1>", "patients");
        assert!(s.starts_with("<svg") && s.trim_end().ends_with("</svg>"));
        assert!(s.contains(">35</text>") && s.contains(">40</text>") && s.contains("Q &lt;1&gt;"));
        assert_eq!(s.matches("<rect x=").count(), 4 + 2);
        assert!(!s.contains("spurious") && !s.contains("missing"));
        assert_eq!(nice_scale(8.0), (8.0, 2.0));
    }

    #[test]
    fn spurious_and_missing_groups_are_marked() {
        let missing = GroupError { presence: Presence::Missing, mass: 0.0, ..GroupError::both("60", 4.0, 0.0) };
        let spurious = GroupError { presence: Presence::Spurious, ..GroupError::both("40", 0.0, 3.5) };
        let r = QueryReport {
            query: String::new(),
            groups: vec![GroupError::both("30", 3.0, 3.5), spurious, missing],
            additive: true,
        };
        let s = svg(&r, "Q", "patients");
        assert_eq!(s.matches(r#"<rect class="spurious""#).count(), 1);
        assert_eq!(s.matches(r#"<rect class="missing""#).count(), 1);
        assert!(s.contains("<title>40: spurious</title>") && s.contains("<title>60: missing</title>"));
        assert!(s.contains(">spurious</text>") && s.contains(">missing</text>"));
    }
}
