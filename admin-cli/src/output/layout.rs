//! Text layout for people: tables and aligned `name: value` fields, both laid out by comfy-table
//! without borders (left-aligned columns two spaces apart, no trailing spaces, every line ending
//! in a newline). Every cell is escaped on the way in (see `terminal`), so server text can neither
//! break a column nor reach the terminal as a control sequence.

use comfy_table::{ContentArrangement, presets};

use super::terminal::escape_controls;

/// Rows under a header of `N` columns. Widths are display widths (a CJK character counts two).
#[derive(Debug)]
pub struct Table<const N: usize> {
    header: [String; N],
    rows: Vec<[String; N]>,
}

impl<const N: usize> Table<N> {
    pub fn new(header: [&str; N]) -> Self {
        Table { header: header.map(str::to_owned), rows: Vec::new() }
    }

    /// Appends a row; its cells are escaped.
    pub fn row(&mut self, cells: [String; N]) -> &mut Self {
        self.rows.push(cells.map(|cell| escape_controls(&cell).into_owned()));
        self
    }

    /// Whether there are no rows (only the header).
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// One line per row after the header line.
    pub fn render(&self) -> String {
        lay_out(Some(&self.header), &self.rows)
    }
}

/// Every line indented by two spaces, for a block under a heading.
pub fn indent(text: &str) -> String {
    text.lines().map(|line| format!("  {line}\n")).collect()
}

/// `name: value` lines with the values aligned.
#[derive(Debug, Default)]
pub struct Fields {
    rows: Vec<[String; 2]>,
}

impl Fields {
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends a field; the value is escaped.
    pub fn add(&mut self, name: &str, value: impl Into<String>) -> &mut Self {
        self.rows.push([format!("{name}:"), escape_controls(&value.into()).into_owned()]);
        self
    }

    /// The aligned lines; empty without fields.
    pub fn render(&self) -> String {
        lay_out(None, &self.rows)
    }
}

/// Left-aligned columns separated by two spaces (a right padding of two on every column and no
/// borders), trailing spaces trimmed, each line ending in a newline.
fn lay_out<const N: usize>(header: Option<&[String; N]>, rows: &[[String; N]]) -> String {
    if header.is_none() && rows.is_empty() {
        return String::new();
    }
    let mut table = comfy_table::Table::new();
    // No wrapping to the terminal's width: tables are grepped and cut as often as read. comfy-table
    // still splits a cell wider than 65,535 columns; of the server's texts only an instance's output
    // (64 KiB) can be that wide, and it then continues on the next lines of its column.
    table.load_preset(presets::NOTHING).set_content_arrangement(ContentArrangement::Disabled);
    if let Some(header) = header {
        table.set_header(header.iter());
    }
    for row in rows {
        table.add_row(row.iter());
    }
    for column in table.column_iter_mut() {
        column.set_padding((0, 2));
    }
    let mut text = table.trim_fmt();
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_align_columns_and_trim_trailing_space() {
        let mut table = Table::new(["NAME", "APP", "ENABLED"]);
        table.row(["a".into(), "billing".into(), "true".into()]).row(["longer-name".into(), "x".into(), String::new()]);
        assert_eq!(table.render(), "NAME         APP      ENABLED\na            billing  true\nlonger-name  x\n");
        assert!(Table::new(["A"]).is_empty());
        assert_eq!(Table::new(["A", "B"]).render(), "A  B\n");
    }

    /// The hand-laid layout axctl printed before comfy-table: every cell padded to its column's
    /// width (in chars) plus two spaces, the line's trailing spaces trimmed.
    fn previous_layout(rows: &[Vec<&str>]) -> String {
        let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
        let widths: Vec<usize> = (0..columns)
            .map(|c| rows.iter().filter_map(|r| r.get(c)).map(|s| s.chars().count()).max().unwrap_or(0))
            .collect();
        let mut text = String::new();
        for row in rows {
            let line: String = row.iter().zip(&widths).map(|(cell, width)| format!("{cell:<width$}  ")).collect();
            text.push_str(line.trim_end());
            text.push('\n');
        }
        text
    }

    #[test]
    fn tables_look_exactly_as_they_did_when_laid_out_by_hand() {
        let bodies: [&[[&str; 4]]; 4] = [
            &[],
            &[["1", "", "x", ""]],
            &[["12345", "a b c", "", "last"], ["", "", "", ""], ["7", "zz", "-", "--"]],
            &[["2026-01-01T10:00:00.000Z", "- -> PENDING", "0", "fire"], ["x", "y", "z", "a long last cell"]],
        ];
        for body in bodies {
            let header = ["ID", "WHAT", "WHO", "MESSAGE"];
            let mut table = Table::new(header);
            for row in body {
                table.row(row.map(str::to_owned));
            }
            let rows: Vec<Vec<&str>> =
                std::iter::once(header.to_vec()).chain(body.iter().map(|r| r.to_vec())).collect();
            assert_eq!(table.render(), previous_layout(&rows), "{body:?}");
        }
    }

    #[test]
    fn fields_align_values_after_the_longest_name() {
        let mut fields = Fields::new();
        fields.add("id", "1").add("description", "");
        assert_eq!(fields.render(), "id:           1\ndescription:\n");
        assert_eq!(Fields::new().render(), "");
    }

    #[test]
    fn every_rendered_block_ends_with_a_newline() {
        let mut table = Table::new(["A", "MESSAGE"]);
        table.row(["1".into(), "last".into()]);
        assert!(table.render().ends_with("last\n"), "{:?}", table.render());
        let mut fields = Fields::new();
        fields.add("a", "b");
        assert!(fields.render().ends_with("a:  b\n"));
    }

    #[test]
    fn wide_characters_are_aligned_by_display_width() {
        let mut table = Table::new(["NAME", "X"]);
        table.row(["東京".into(), "1".into()]).row(["ab".into(), "2".into()]);
        assert_eq!(table.render(), "NAME  X\n東京  1\nab    2\n");
    }

    #[test]
    fn long_cells_are_never_wrapped() {
        let long = "word ".repeat(60);
        let mut table = Table::new(["A", "B"]);
        table.row(["1".into(), long.clone()]);
        assert_eq!(table.render().lines().count(), 2, "{}", table.render());
    }

    #[test]
    fn newlines_in_a_cell_cannot_break_the_row() {
        let mut table = Table::new(["A", "B"]);
        table.row(["x\ny".into(), "z".into()]);
        assert_eq!(table.render(), "A     B\nx\\ny  z\n");
    }
}
