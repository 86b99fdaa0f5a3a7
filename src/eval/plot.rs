//! Grouped bar charts of a query's answers per group, as standalone SVG: the original answer
//! next to its estimate from one release ([`svg`], with each group's relative error written
//! above its bars), or next to the estimates from several releases ([`compare_svg`], each
//! release's ARE in the legend). The x axis is labelled with the query's grouping column.
//! Hand-written: a chart of a few series needs a few dozen elements, not a plotting crate.

use super::parse::{GroupExpr, parse_query};
use super::report::{Presence, QueryReport};
use std::cmp::Ordering;
use std::fmt::Write;

const PLOT_H: f64 = 270.0;
const LEFT: f64 = 80.0;
const RIGHT: f64 = 30.0;
/// Title, then the legend on its own row, then the plot.
const TITLE_Y: f64 = 24.0;
const LEGEND_Y: f64 = 48.0;
const TOP: f64 = 72.0;
/// Approximate width of one character of the 12px tick labels, to size the band under the axis.
const CHAR_W: f64 = 6.5;
const COLORS: [&str; 5] = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd"];
/// Backgrounds of the groups only one side has.
const MISSING: &str = "#e8e8e8";
const SPURIOUS: &str = "#fde0dd";

/// One bar per group and series; `notes` are written above each group's bars.
struct Chart<'a> {
    title: &'a str,
    x_label: String,
    y_label: &'a str,
    keys: Vec<String>,
    series: Vec<(String, Vec<Option<f64>>)>,
    notes: Vec<Option<String>>,
    /// Whether each group is in both answers, or only in one ([`mark_presence`]).
    presence: Vec<Presence>,
}

/// Original vs estimate per group for one release; the relative error of each group is written
/// above its bars and the ARE is in the legend. `title` is shown on top, `y_label` on the value
/// axis.
pub fn svg(report: &QueryReport, title: &str, y_label: &str) -> String {
    let keys: Vec<String> = report.groups.iter().map(|g| g.key.clone()).collect();
    let notes = report.groups.iter().map(|g| g.rel_error().map(percent)).collect();
    let estimate = with_are("estimate", report);
    chart(&Chart {
        title,
        x_label: x_label(report),
        y_label,
        series: vec![
            ("original".into(), report.groups.iter().map(|g| g.original).collect()),
            (estimate, report.groups.iter().map(|g| g.estimate).collect()),
        ],
        presence: report.groups.iter().map(|g| g.presence).collect(),
        keys,
        notes,
    })
}

/// The original answers next to the estimates of several releases of the same query (one
/// report per release, named), each release's ARE in the legend. Groups are the union of the
/// reports' groups; a release without a group has no bar there.
pub fn compare_svg(reports: &[(&str, &QueryReport)], title: &str, y_label: &str) -> String {
    let mut keys: Vec<String> = reports.iter().flat_map(|(_, r)| r.groups.iter().map(|g| g.key.clone())).collect();
    keys.sort_by(|a, b| key_order(a, b));
    keys.dedup();
    let find = |r: &QueryReport, k: &str| r.groups.iter().find(|g| g.key == k).cloned();
    let original = keys.iter().map(|k| reports.iter().find_map(|(_, r)| find(r, k).and_then(|g| g.original))).collect();
    let mut series = vec![("original".to_string(), original)];
    for (name, r) in reports {
        series.push((with_are(name, r), keys.iter().map(|k| find(r, k).and_then(|g| g.estimate)).collect()));
    }
    let x_label = reports.first().map(|(_, r)| x_label(r)).unwrap_or_else(|| "group".into());
    // Presence differs from release to release; each release's own plot marks it.
    let (notes, presence) = (vec![None; keys.len()], vec![Presence::Both; keys.len()]);
    chart(&Chart { title, x_label, y_label, notes, presence, keys, series })
}

fn with_are(name: &str, report: &QueryReport) -> String {
    match report.summary().are() {
        Some(are) => format!("{name} (ARE {are:.3})"),
        None => name.to_string(),
    }
}

/// Numbers by value before text, as the reports order their groups.
fn key_order(a: &str, b: &str) -> Ordering {
    match (a.parse::<f64>(), b.parse::<f64>()) {
        (Ok(x), Ok(y)) => x.total_cmp(&y),
        (Ok(_), Err(_)) => Ordering::Less,
        (Err(_), Ok(_)) => Ordering::Greater,
        _ => a.cmp(b),
    }
}

/// The query's grouping, e.g. `age (bands of 5)` for `FLOOR(age/5)*5`.
fn x_label(report: &QueryReport) -> String {
    let Ok(q) = parse_query(&report.query) else { return "group".into() };
    let parts: Vec<String> = q
        .groups
        .iter()
        .map(|g| match g {
            GroupExpr::Column(c) => c.clone(),
            GroupExpr::Bucket { col, offset, width, .. } if *offset == 0.0 => {
                format!("{col} (bands of {})", tick(*width))
            }
            GroupExpr::Bucket { col, offset, width, .. } => {
                format!(
                    "{col} (bands of {}, group g holds g-{}..g+{})",
                    tick(*width),
                    tick(*offset),
                    tick(width - offset - 1.0)
                )
            }
        })
        .collect();
    if parts.is_empty() { "group".into() } else { parts.join(", ") }
}

fn chart(c: &Chart) -> String {
    let n = c.keys.len().max(1);
    let bars = c.series.len().max(1) as f64;
    let slot = (720.0 / n as f64).clamp(14.0 * bars + 8.0, 30.0 * bars + 12.0);
    let longest = c.keys.iter().map(|k| k.chars().count()).max().unwrap_or(1) as f64;
    // Rotated tick labels need their length times sin 45°; then the axis title.
    let bottom = 14.0 + longest * CHAR_W * std::f64::consts::FRAC_1_SQRT_2 + 30.0;
    let width = (LEFT + RIGHT + slot * n as f64).max(LEFT + RIGHT + legend_width(c));
    let height = TOP + PLOT_H + bottom;
    let base = TOP + PLOT_H;
    let max = c.series.iter().flat_map(|s| s.1.iter()).flatten().fold(0.0f64, |m, v| m.max(*v));
    let (top, step) = nice_scale(max);
    let y = |v: f64| TOP + PLOT_H * (1.0 - v / top);
    let mut s = String::new();
    let _ = writeln!(
        s,
        concat!(
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0}" height="{height:.0}" "#,
            r#"viewBox="0 0 {width:.0} {height:.0}" font-family="sans-serif" font-size="12">"#
        ),
        width = width,
        height = height
    );
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
    text(&mut s, width / 2.0, TITLE_Y, "middle", r#" font-size="15""#, c.title);
    legend(&mut s, c);
    // Value axis: gridlines and tick labels.
    let mut v = 0.0;
    while v <= top + step * 1e-9 {
        line(&mut s, (LEFT, y(v)), (width - RIGHT, y(v)), "#ddd");
        text(&mut s, LEFT - 6.0, y(v) + 4.0, "end", "", &tick(v));
        v += step;
    }
    line(&mut s, (LEFT, TOP), (LEFT, base), "black");
    line(&mut s, (LEFT, base), (width - RIGHT, base), "black");
    let bar = slot * 0.76 / bars;
    for (i, key) in c.keys.iter().enumerate() {
        let x0 = LEFT + slot * i as f64;
        mark_presence(&mut s, c.presence[i], x0, slot, key);
        let mut highest = base;
        for (k, (name, values)) in c.series.iter().enumerate() {
            let Some(v) = values[i] else { continue };
            let x = x0 + slot * 0.12 + bar * k as f64;
            let (top_y, h) = (y(v), (base - y(v)).max(0.0));
            highest = highest.min(top_y);
            let _ = writeln!(
                s,
                concat!(
                    r#"<rect x="{x:.1}" y="{top_y:.1}" width="{bar:.1}" height="{h:.1}" fill="{color}">"#,
                    "<title>{key} {name}: {v:.3}</title></rect>"
                ),
                x = x,
                top_y = top_y,
                bar = bar,
                h = h,
                color = COLORS[k % COLORS.len()],
                key = escape(key),
                name = escape(name),
                v = v
            );
        }
        if let Some(note) = &c.notes[i] {
            text(&mut s, x0 + slot / 2.0, highest - 4.0, "middle", r##" font-size="9" fill="#555""##, note);
        }
        let (lx, ly) = (x0 + slot / 2.0, base + 14.0);
        text(&mut s, lx, ly, "end", &format!(r#" transform="rotate(-45 {lx:.1} {ly:.1})""#), key);
    }
    text(&mut s, LEFT + (width - LEFT - RIGHT) / 2.0, height - 10.0, "middle", "", &c.x_label);
    let mid = TOP + PLOT_H / 2.0;
    text(&mut s, 18.0, mid, "middle", &format!(r#" transform="rotate(-90 18 {mid:.1})""#), c.y_label);
    s.push_str("</svg>\n");
    s
}

/// A shaded band behind a group the estimate lacks (missing) or invents (spurious), its
/// status written down the band: a bar of 0 and an absent bar look alike otherwise.
fn mark_presence(s: &mut String, presence: Presence, x0: f64, slot: f64, key: &str) {
    let shade = match presence {
        Presence::Both => return,
        Presence::Missing => MISSING,
        Presence::Spurious => SPURIOUS,
    };
    let name = presence.name();
    let _ = writeln!(
        s,
        r#"<rect class="{name}" x="{x0:.1}" y="{TOP:.1}" width="{slot:.1}" height="{PLOT_H:.1}" fill="{shade}"><title>{}: {name}</title></rect>"#,
        escape(key)
    );
    let (tx, ty) = (x0 + slot / 2.0 + 3.0, TOP + 4.0);
    text(s, tx, ty, "end", &format!(r#" font-size="9" transform="rotate(-90 {tx:.1} {ty:.1})""#), name);
}

fn line(s: &mut String, (x1, y1): (f64, f64), (x2, y2): (f64, f64), stroke: &str) {
    let _ = writeln!(s, r#"<line x1="{x1:.1}" y1="{y1:.1}" x2="{x2:.1}" y2="{y2:.1}" stroke="{stroke}"/>"#);
}

/// A text element; `extra` holds further attributes (with a leading space).
fn text(s: &mut String, x: f64, y: f64, anchor: &str, extra: &str, content: &str) {
    let _ = writeln!(s, r#"<text x="{x:.1}" y="{y:.1}" text-anchor="{anchor}"{extra}>{}</text>"#, escape(content));
}

/// Width of one legend entry: the swatch, its name and a gap.
fn entry_width(name: &str) -> f64 {
    18.0 + name.chars().count() as f64 * CHAR_W + 16.0
}

fn legend_width(c: &Chart) -> f64 {
    c.series.iter().map(|(name, _)| entry_width(name)).sum()
}

/// The series names in one row between the title and the plot, so they never cover either.
fn legend(s: &mut String, c: &Chart) {
    let mut x = LEFT;
    for (k, (name, _)) in c.series.iter().enumerate() {
        let color = COLORS[k % COLORS.len()];
        let _ = writeln!(s, r#"<rect x="{x:.1}" y="{:.1}" width="12" height="12" fill="{color}"/>"#, LEGEND_Y - 10.0);
        text(s, x + 18.0, LEGEND_Y, "start", "", name);
        x += entry_width(name);
    }
}

/// A relative error as a whole percentage (`12%`), or with one decimal below 10 %.
fn percent(r: f64) -> String {
    if r < 0.1 { format!("{:.1}%", r * 100.0) } else { format!("{:.0}%", r * 100.0) }
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

/// Text as HTML or SVG character data or attribute value: the one escaper of the charts, the
/// release report (`evaluate --report`) and the Python package's HTML tables.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::report::GroupError;
    use super::*;

    fn g(k: &str, o: f64, e: f64) -> GroupError {
        GroupError::both(k, o, e)
    }

    fn q1(groups: Vec<GroupError>) -> QueryReport {
        let query = "SELECT FLOOR(age/5)*5 AS g, COUNT(*) FROM nps WHERE sex = 'M' GROUP BY FLOOR(age/5)*5".into();
        QueryReport { query, groups, additive: true }
    }

    /// The y coordinate of the first element whose text is `content`.
    fn text_y(s: &str, content: &str) -> f64 {
        let line = s.lines().find(|l| l.ends_with(&format!(">{content}</text>"))).expect(content);
        let y = line.split("y=\"").nth(1).unwrap().split('"').next().unwrap();
        y.parse().unwrap()
    }

    #[test]
    fn bars_labels_relative_errors_and_legend() {
        let r = q1(vec![g("35", 3.0, 2.5), g("40", 8.0, 6.0)]);
        let s = svg(&r, "Q <1>", "patients");
        assert!(s.starts_with("<svg") && s.trim_end().ends_with("</svg>"));
        assert!(s.contains(">35</text>") && s.contains(">40</text>") && s.contains("Q &lt;1&gt;"));
        // Two bars per group and two legend swatches.
        assert_eq!(s.matches("<rect x=").count(), 4 + 2);
        // Per-group relative errors (0.5/3, 2/8) and the ARE in the legend.
        assert!(s.contains(">17%</text>") && s.contains(">25%</text>"), "{s}");
        assert!(s.contains(">estimate (ARE 0.208)</text>"), "{s}");
        // The x axis names the grouping column; the legend sits between title and plot.
        assert!(s.contains(">age (bands of 5)</text>"), "{s}");
        let (title, legend) = (text_y(&s, "Q &lt;1&gt;"), text_y(&s, "original"));
        assert!(title < legend && legend < TOP, "title {title}, legend {legend}");
        assert_eq!(nice_scale(8.0), (8.0, 2.0));
    }

    #[test]
    fn the_band_under_the_axis_fits_the_longest_label() {
        let short = svg(&q1(vec![g("5", 1.0, 1.0)]), "t", "y");
        let long = svg(&q1(vec![g("a rather long group label", 1.0, 1.0)]), "t", "y");
        let height =
            |s: &str| -> f64 { s.split("height=\"").nth(1).unwrap().split('"').next().unwrap().parse().unwrap() };
        assert!(height(&short) < TOP + PLOT_H + 70.0, "{}", height(&short));
        assert!(height(&long) > height(&short) + 80.0);
        // The axis title is the last text, below the rotated labels.
        assert!(text_y(&short, "age (bands of 5)") > TOP + PLOT_H + 14.0 + CHAR_W * 0.7);
    }

    #[test]
    fn comparison_aligns_groups_across_releases() {
        let a = q1(vec![g("5", 1.0, 2.0), g("10", 4.0, 4.0)]);
        let b = q1(vec![g("10", 4.0, 2.0), g("15", 0.0, 1.0)]);
        let s = compare_svg(&[("k-anonymity", &a), ("IPA", &b)], "Q1", "patients");
        let keys: Vec<&str> = s
            .lines()
            .filter(|l| l.contains("rotate(-45"))
            .map(|l| l.split('>').nth(1).unwrap().trim_end_matches("</text"))
            .collect();
        assert_eq!(keys, ["5", "10", "15"]);
        // original: 3 groups; k-anonymity: 2; IPA: 2; plus 3 legend swatches.
        assert_eq!(s.matches("<rect x=").count(), 3 + 2 + 2 + 3);
        assert!(s.contains(">k-anonymity (ARE 0.500)</text>") && s.contains(">IPA (ARE 0.750)</text>"), "{s}");
        assert!(s.contains("<title>15 original: 0.000</title>"));
    }

    #[test]
    fn spurious_and_missing_groups_are_marked() {
        let missing = GroupError { presence: Presence::Missing, mass: 0.0, ..GroupError::both("60", 4.0, 0.0) };
        let spurious = GroupError { presence: Presence::Spurious, ..GroupError::both("40", 0.0, 3.5) };
        let s = svg(&q1(vec![g("30", 3.0, 3.5), spurious, missing]), "Q", "patients");
        assert_eq!(s.matches(r#"<rect class="spurious""#).count(), 1);
        assert_eq!(s.matches(r#"<rect class="missing""#).count(), 1);
        assert!(s.contains("<title>40: spurious</title>") && s.contains("<title>60: missing</title>"));
        assert!(s.contains(">spurious</text>") && s.contains(">missing</text>"));
        let plain = svg(&q1(vec![g("30", 3.0, 3.5)]), "Q", "patients");
        assert!(!plain.contains("spurious") && !plain.contains("missing"));
    }
}
