//! Address mapping: how a controller-local address splits into fields.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::ControllerConfig;

/// One field of a DRAM address.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AddressField {
    /// Rank select.
    Rank,
    /// Bank within the rank.
    Bank,
    /// Row within the bank.
    Row,
    /// Column (bus word) within the row.
    Column,
    /// Byte within a bus word; always the lowest bits, never written in a
    /// mapping string.
    Offset,
}

impl AddressField {
    fn parse(s: &str) -> Option<AddressField> {
        Some(match s {
            "rank" => AddressField::Rank,
            "bank" => AddressField::Bank,
            "row" => AddressField::Row,
            "column" => AddressField::Column,
            _ => return None,
        })
    }

    /// Name used in mapping strings.
    pub fn as_str(self) -> &'static str {
        match self {
            AddressField::Rank => "rank",
            AddressField::Bank => "bank",
            AddressField::Row => "row",
            AddressField::Column => "column",
            AddressField::Offset => "offset",
        }
    }
}

/// `bits` consecutive address bits belonging to `field`. Where a field is
/// split into several pieces, the piece listed first holds its higher bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BitField {
    /// Which field these bits belong to.
    pub field: AddressField,
    /// How many bits.
    pub bits: u32,
}

/// `mapping` of a controller: presets, or a custom bit-field string.
///
/// A mapping string lists fields from the most to the least significant bit,
/// separated by `-`: `rank`, `bank`, `row`, `column`, each optionally with a
/// width (`row:4`). A field may be split into several pieces; a field written
/// without a width takes all of its bits not given elsewhere, and a field
/// not written at all (only `rank` may be left out) goes on top. The widths
/// of a field must add up to log2 of its count in the controller's geometry.
/// The byte offset within a bus word is always the lowest bits.
///
/// `"bank-row-column"` is therefore the same as `"rank-bank-row-column"`,
/// and `"row:14-bank-row:2-column"` puts the bank bits between the two
/// lowest row bits and the upper ones.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AddressMapping {
    /// `"bank-row-column"`: consecutive rows of a bank are contiguous; each
    /// bank is one large contiguous block (seed 000's FPGA).
    BankRowColumn,
    /// `"row-bank-column"`: consecutive row-sized blocks rotate over banks
    /// (Xilinx MIG's default).
    RowBankColumn,
    /// Any other mapping string (syntax checked on load, widths against the
    /// geometry by [`crate::Config::validate`]).
    Custom(String),
}

impl AddressMapping {
    /// The string written in TOML.
    pub fn as_str(&self) -> &str {
        match self {
            AddressMapping::BankRowColumn => "bank-row-column",
            AddressMapping::RowBankColumn => "row-bank-column",
            AddressMapping::Custom(s) => s,
        }
    }

    /// Parses a mapping string, checking its syntax only.
    pub fn parse(s: &str) -> Result<AddressMapping, String> {
        match s {
            "bank-row-column" => Ok(AddressMapping::BankRowColumn),
            "row-bank-column" => Ok(AddressMapping::RowBankColumn),
            _ => {
                parse_pieces(s)?;
                Ok(AddressMapping::Custom(s.to_string()))
            }
        }
    }

    /// Resolves the mapping against a controller's geometry into bit fields,
    /// most significant first, ending with the byte offset.
    pub fn layout(&self, c: &ControllerConfig) -> Result<Vec<BitField>, String> {
        let pieces = parse_pieces(self.as_str())?;
        let width = |what: &str, n: u64| -> Result<u32, String> {
            if n == 0 || !n.is_power_of_two() {
                Err(format!("{what} must be a power of two, got {n}"))
            } else {
                Ok(n.trailing_zeros())
            }
        };
        let total = |f: AddressField| -> Result<u32, String> {
            match f {
                AddressField::Rank => width("ranks", u64::from(c.ranks)),
                AddressField::Bank => width("banks", u64::from(c.banks)),
                AddressField::Row => width("rows", c.rows),
                AddressField::Column => width("columns", c.columns),
                AddressField::Offset => width("row_buffer_bytes / columns", c.bus_bytes()),
            }
        };
        let mut out: Vec<BitField> = Vec::new();
        if !pieces.iter().any(|(f, _)| *f == AddressField::Rank) {
            out.push(BitField {
                field: AddressField::Rank,
                bits: total(AddressField::Rank)?,
            });
        }
        for field in [AddressField::Bank, AddressField::Row, AddressField::Column] {
            if !pieces.iter().any(|(f, _)| *f == field) {
                return Err(format!(
                    "mapping '{}' has no '{}' field; list rank, bank, row and column from the most significant bit down, e.g. 'bank-row-column'",
                    self.as_str(),
                    field.as_str()
                ));
            }
        }
        for &(field, bits) in &pieces {
            let need = total(field)?;
            let given: u32 = pieces
                .iter()
                .filter(|(f, _)| *f == field)
                .filter_map(|(_, b)| *b)
                .sum();
            let open = pieces
                .iter()
                .filter(|(f, b)| *f == field && b.is_none())
                .count();
            let bits = match bits {
                Some(b) => b,
                None if open > 1 => {
                    return Err(format!(
                        "mapping '{}': '{}' appears more than once without a width; give widths, e.g. '{}:2'",
                        self.as_str(),
                        field.as_str(),
                        field.as_str()
                    ))
                }
                None => need.checked_sub(given).ok_or_else(|| {
                    format!(
                        "mapping '{}': '{}' pieces add up to {} bits, but the geometry has {}",
                        self.as_str(),
                        field.as_str(),
                        given,
                        need
                    )
                })?,
            };
            if open == 0 && given != need {
                return Err(format!(
                    "mapping '{}': '{}' pieces add up to {} bits, but the geometry has {} (log2 of its count)",
                    self.as_str(),
                    field.as_str(),
                    given,
                    need
                ));
            }
            out.push(BitField { field, bits });
        }
        out.push(BitField {
            field: AddressField::Offset,
            bits: total(AddressField::Offset)?,
        });
        out.retain(|b| b.bits > 0);
        Ok(out)
    }
}

/// Splits a mapping string into `(field, width)` pieces, MSB first.
fn parse_pieces(s: &str) -> Result<Vec<(AddressField, Option<u32>)>, String> {
    if s.trim().is_empty() {
        return Err("mapping is empty; use 'bank-row-column', 'row-bank-column' or a bit-field string like 'row:14-bank-row:2-column'".into());
    }
    s.split('-')
        .map(|piece| {
            let (name, width) = match piece.split_once(':') {
                Some((n, w)) => {
                    let w: u32 = w.trim().parse().map_err(|_| {
                        format!("mapping '{s}': width '{w}' of '{n}' is not a number")
                    })?;
                    (n.trim(), Some(w))
                }
                None => (piece.trim(), None),
            };
            let field = AddressField::parse(name).ok_or_else(|| {
                format!(
                    "mapping '{s}': unknown field '{name}'; fields are rank, bank, row, column (e.g. 'bank-row-column')"
                )
            })?;
            Ok((field, width))
        })
        .collect()
}

impl fmt::Display for AddressMapping {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for AddressMapping {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for AddressMapping {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        AddressMapping::parse(&s).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use AddressField::*;

    fn layout(m: &str) -> Result<Vec<(AddressField, u32)>, String> {
        let c = ControllerConfig {
            mapping: AddressMapping::parse(m)?,
            ..ControllerConfig::default()
        };
        Ok(c.address_layout()?
            .into_iter()
            .map(|b| (b.field, b.bits))
            .collect())
    }

    #[test]
    fn presets_resolve_against_geometry() {
        // 8 banks, 65536 rows, 1024 columns of 8 bytes, one rank.
        assert_eq!(
            layout("bank-row-column").unwrap(),
            vec![(Bank, 3), (Row, 16), (Column, 10), (Offset, 3)]
        );
        assert_eq!(
            layout("row-bank-column").unwrap(),
            vec![(Row, 16), (Bank, 3), (Column, 10), (Offset, 3)]
        );
        let total: u32 = layout("bank-row-column").unwrap().iter().map(|x| x.1).sum();
        assert_eq!(1u64 << total, 4 << 30);
    }

    #[test]
    fn custom_split_fields() {
        assert_eq!(
            layout("row:14-bank-row:2-column").unwrap(),
            vec![(Row, 14), (Bank, 3), (Row, 2), (Column, 10), (Offset, 3)]
        );
        assert_eq!(
            layout("rank-row-bank:3-column").unwrap(),
            vec![(Row, 16), (Bank, 3), (Column, 10), (Offset, 3)]
        );
    }

    #[test]
    fn custom_errors() {
        assert!(AddressMapping::parse("bank-rwo-column")
            .unwrap_err()
            .contains("unknown field 'rwo'"));
        assert!(AddressMapping::parse("bank:x-row-column")
            .unwrap_err()
            .contains("not a number"));
        assert!(layout("bank-row").unwrap_err().contains("no 'column'"));
        assert!(layout("bank:2-row-column")
            .unwrap_err()
            .contains("'bank' pieces add up to 2 bits"));
        assert!(layout("row-bank-row-column")
            .unwrap_err()
            .contains("more than once"));
    }
}
