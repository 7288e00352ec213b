//! The output schema, defined once: every record and column table a run reports, each column's
//! name, type, unit and meaning. The summary records ([`record!`]) and the column tables
//! ([`columns!`]) are declared through the two macros here, which emit the Rust struct and its
//! schema from the same list, so the two cannot disagree. A record serialised directly (the
//! summary of a dumbbell or a `[[links]]` network) keeps the declaration order; the
//! `[wireless]` line's summary is built as a `serde_json::Value`, whose keys come out sorted. [`TABLES`] lists them all; the bindings convert the column tables generically
//! ([`ColumnData`]), and `ccsim._core.schema()` hands [`to_json`] to the Python package, whose
//! `Result`, store, CLI table and emulator build their tables from it (see
//! `python/ccsim/schema.py`), as does `docs/outputs.md` (`ccsim schema --markdown`).

use serde::Serialize;

/// What one column or key holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Type {
    /// An integer (stored as int64).
    Int,
    /// A float64; NaN or null where there is no value.
    Float,
    /// A string.
    Str,
    /// A string from a small set (an algorithm, a link): categorical in a DataFrame.
    Category,
    Bool,
    /// A list of strings (e.g. a flow's path).
    StrList,
    /// One record of the named table (e.g. the dumbbell's `bottleneck`).
    Record(&'static str),
    /// A list of records of the named table (e.g. `flows`).
    Records(&'static str),
    /// An object of its own shape, described in the column's text.
    Object,
}

impl Type {
    /// The name the schema's JSON gives the type: `int`, `float`, `str`, `category`, `bool`,
    /// `list[str]`, `record:TABLE`, `records:TABLE`, `object`.
    pub fn name(self) -> String {
        match self {
            Type::Int => "int".into(),
            Type::Float => "float".into(),
            Type::Str => "str".into(),
            Type::Category => "category".into(),
            Type::Bool => "bool".into(),
            Type::StrList => "list[str]".into(),
            Type::Record(t) => format!("record:{t}"),
            Type::Records(t) => format!("records:{t}"),
            Type::Object => "object".into(),
        }
    }
}

/// One column of a table (or key of a record).
#[derive(Debug, Clone, Copy)]
pub struct Column {
    pub name: &'static str,
    pub ty: Type,
    /// May be null (JSON) or absent; float columns may also be NaN.
    pub nullable: bool,
    /// `s`, `ms`, `Mbps`, `bytes`, `pkts`, `segments`, `fraction`, `count`, or empty.
    pub unit: &'static str,
    pub doc: &'static str,
}

/// A table: a record type of the summary (one row per flow, link, ...) or a column table (the
/// time series, the algorithm events, the link queues). Its columns may come in parts (a
/// record that embeds another's keys).
#[derive(Debug, Clone, Copy)]
pub struct Table {
    pub name: &'static str,
    pub doc: &'static str,
    pub parts: &'static [&'static [Column]],
}

impl Table {
    pub fn columns(&self) -> impl Iterator<Item = &'static Column> {
        self.parts.iter().flat_map(|p| p.iter())
    }
    pub fn names(&self) -> Vec<&'static str> {
        self.columns().map(|c| c.name).collect()
    }
}

/// The schema type of a Rust field type (for [`record!`] and [`columns!`]).
pub trait ColumnType {
    const TYPE: Type;
    const NULLABLE: bool = false;
}
macro_rules! column_type {
    ($t:ty, $v:expr) => {
        impl ColumnType for $t {
            const TYPE: Type = $v;
        }
    };
}
column_type!(u32, Type::Int);
column_type!(u64, Type::Int);
column_type!(usize, Type::Int);
column_type!(f64, Type::Float);
column_type!(bool, Type::Bool);
column_type!(String, Type::Str);
column_type!(&'static str, Type::Str);
column_type!(Vec<String>, Type::StrList);
impl<T: ColumnType> ColumnType for Option<T> {
    const TYPE: Type = T::TYPE;
    const NULLABLE: bool = true;
}

/// A column's type and nullability: its Rust type's, or the `(Type, nullable)` given after
/// `as` (for nested records and lists).
macro_rules! col_type {
    ($ty:ty) => {
        (<$ty as $crate::output::schema::ColumnType>::TYPE, <$ty as $crate::output::schema::ColumnType>::NULLABLE)
    };
    ($ty:ty, $o:expr) => {
        $o
    };
}
pub(crate) use col_type;

/// A summary record: a `Serialize` struct whose fields are its columns, and `COLUMNS`.
///
/// ```text
/// record! {
///     /// doc
///     pub struct FlowSummary {
///         id: u32, "", "the flow's number";
///         #[serde(skip_serializing_if = "Vec::is_empty")]
///         path: Vec<String> as (Type::StrList, true), "", "...";
///     }
/// }
/// ```
/// Each field: attributes, name, Rust type, optionally `as (schema type, nullable)`, unit, text.
macro_rules! record {
    (
        $(#[$sm:meta])*
        pub struct $S:ident {
            $( $(#[$fm:meta])* $f:ident : $ty:ty $(as $o:expr)?, $unit:literal, $doc:literal; )*
        }
    ) => {
        $(#[$sm])*
        #[derive(Debug, Clone, serde::Serialize)]
        pub struct $S {
            $( #[doc = $doc] $(#[$fm])* pub $f: $ty, )*
        }
        impl $S {
            /// This record's columns, in the order its JSON gives them.
            pub const COLUMNS: &'static [$crate::output::schema::Column] = &[
                $( $crate::output::schema::Column {
                    name: stringify!($f),
                    ty: $crate::output::schema::col_type!($ty $(, $o)?).0,
                    nullable: $crate::output::schema::col_type!($ty $(, $o)?).1,
                    unit: $unit,
                    doc: $doc,
                }, )*
            ];
        }
    };
}
pub(crate) use record;

/// A column table: a struct holding one `Vec` per column (all the same length) plus any other
/// fields after `extra`, with `COLUMNS`, `len`, `is_empty`, `reserve_exact` and
/// [`into_columns`](ColumnData) in the declared order.
macro_rules! columns {
    (
        $(#[$sm:meta])*
        pub struct $S:ident {
            $( $(#[$fm:meta])* $f:ident : $ty:ty $(as $o:expr)?, $unit:literal, $doc:literal; )*
        }
        $( extra { $( $(#[$em:meta])* $ev:vis $ef:ident : $ety:ty, )* } )?
    ) => {
        $(#[$sm])*
        #[derive(Debug, Clone, Default)]
        pub struct $S {
            $( #[doc = $doc] $(#[$fm])* pub $f: Vec<$ty>, )*
            $( $( $(#[$em])* $ev $ef: $ety, )* )?
        }
        impl $S {
            /// This table's columns, in order.
            pub const COLUMNS: &'static [$crate::output::schema::Column] = &[
                $( $crate::output::schema::Column {
                    name: stringify!($f),
                    ty: $crate::output::schema::col_type!($ty $(, $o)?).0,
                    nullable: $crate::output::schema::col_type!($ty $(, $o)?).1,
                    unit: $unit,
                    doc: $doc,
                }, )*
            ];
            /// Rows (every column has this many).
            pub fn len(&self) -> usize {
                [$( self.$f.len() ),*][0]
            }
            pub fn is_empty(&self) -> bool {
                self.len() == 0
            }
            /// Reserve room for exactly `rows` more rows (no growth by doubling while sampling).
            pub fn reserve_exact(&mut self, rows: usize) {
                $( self.$f.reserve_exact(rows); )*
            }
            /// The columns, moved out, in order, named.
            pub fn into_columns(self) -> Vec<(&'static str, $crate::output::schema::ColumnData)> {
                vec![ $( (stringify!($f), self.$f.into()), )* ]
            }
        }
    };
}
pub(crate) use columns;

/// An index into a table's list of names (e.g. a link direction's id): a string column kept as
/// a small number per row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Interned(pub u32);
impl ColumnType for Interned {
    const TYPE: Type = Type::Category;
}

/// One column's values, moved out of a column table, for the bindings to convert.
#[derive(Debug)]
pub enum ColumnData {
    F64(Vec<f64>),
    U32(Vec<u32>),
    U64(Vec<u64>),
    Str(Vec<&'static str>),
    OptStr(Vec<Option<&'static str>>),
    /// Indices into the table's own list of names.
    Interned(Vec<Interned>),
}
macro_rules! column_data {
    ($t:ty, $v:ident) => {
        impl From<Vec<$t>> for ColumnData {
            fn from(v: Vec<$t>) -> Self {
                ColumnData::$v(v)
            }
        }
    };
}
column_data!(f64, F64);
column_data!(u32, U32);
column_data!(u64, U64);
column_data!(&'static str, Str);
column_data!(Option<&'static str>, OptStr);
column_data!(Interned, Interned);

use crate::metrics::{AirHopSummary, BottleneckSummary, EventLog, FlowSummary, LinkSeries, LinkSummary, StationPlace, Summary, TimeSeries, WorkloadBucket, WorkloadSummary};
use crate::net::wifi::StationStats;
use crate::output::wireless::{LineFlow, LineSummary};

/// Every table of the output, records first, then the column tables.
pub static TABLES: &[Table] = &[
    Table {
        name: "summary",
        doc: "One run (`ccsim run --json`, `summary.json`, `Result.to_dict()`).",
        parts: &[Summary::COLUMNS],
    },
    Table {
        name: "flows",
        doc: "One row per flow, in file order (`Result.summary`, `flows.parquet`).",
        parts: &[FlowSummary::COLUMNS],
    },
    Table {
        name: "bottleneck",
        doc: "The dumbbell's bottleneck, its data direction (`Result.bottleneck`).",
        parts: &[BottleneckSummary::COLUMNS],
    },
    Table {
        name: "links",
        doc: "One row per link direction that carried packets, in the network's order (`Result.links`, `links.parquet`).",
        parts: &[LinkSummary::COLUMNS],
    },
    Table {
        name: "stations",
        doc: "One row per Wi-Fi station: its MAC and host counters (`Result.stations`); `medium` and `node` for `[[wifi]]` stations only.",
        parts: &[StationPlace::COLUMNS, StationStats::COLUMNS],
    },
    Table {
        name: "air_hops",
        doc: "One row per hop of a Wi-Fi medium that sent data frames: a station to its neighbour (`Result.air_hops`); `medium` for `[[wifi]]` hops only.",
        parts: &[AirHopSummary::COLUMNS],
    },
    Table {
        name: "workloads",
        doc: "One row per `[[workloads]]` entry (`Result.to_dict()[\"workloads\"]`).",
        parts: &[WorkloadSummary::COLUMNS],
    },
    Table {
        name: "workload_buckets",
        doc: "A workload's FCT and slowdown, all its flows then by size bucket.",
        parts: &[WorkloadBucket::COLUMNS],
    },
    Table {
        name: "line_summary",
        doc: "One run of a `[wireless]` line (`ccsim run --json`).",
        parts: &[LineSummary::COLUMNS],
    },
    Table {
        name: "line_flows",
        doc: "One row per flow of a `[wireless]` line: a TCP flow has the `flows` columns (a UDP flow `id`, `group`, `cc` = \"udp\", `start_s`, `end_s`, `throughput_mbps`), then these.",
        parts: &[FlowSummary::COLUMNS, LineFlow::COLUMNS],
    },
    Table {
        name: "timeseries",
        doc: "One row per sample time and flow (`Result.timeseries`, `timeseries.parquet`).",
        parts: &[TimeSeries::COLUMNS],
    },
    Table {
        name: "cc_events",
        doc: "One row per algorithm event (`Result.cc_events`, `cc_events.parquet`).",
        parts: &[EventLog::COLUMNS],
    },
    Table {
        name: "link_queues",
        doc: "The queue of every link direction with a buffer, one row per sample time and direction (`Result.link_queues`, `link_queues.parquet`).",
        parts: &[LinkSeries::COLUMNS],
    },
];

/// The table named `name`.
pub fn table(name: &str) -> Option<&'static Table> {
    TABLES.iter().find(|t| t.name == name)
}

#[derive(Serialize)]
struct ColumnJson {
    name: &'static str,
    #[serde(rename = "type")]
    ty: String,
    nullable: bool,
    unit: &'static str,
    doc: &'static str,
}

#[derive(Serialize)]
struct TableJson {
    name: &'static str,
    doc: &'static str,
    columns: Vec<ColumnJson>,
}

/// The whole schema as JSON: a list of `{name, doc, columns: [{name, type, nullable, unit,
/// doc}]}` in the order of [`TABLES`].
pub fn to_json() -> serde_json::Value {
    let tables: Vec<TableJson> = TABLES
        .iter()
        .map(|t| TableJson {
            name: t.name,
            doc: t.doc,
            columns: t
                .columns()
                .map(|c| ColumnJson { name: c.name, ty: c.ty.name(), nullable: c.nullable, unit: c.unit, doc: c.doc })
                .collect(),
        })
        .collect();
    serde_json::to_value(tables).expect("the schema serialises")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_references_resolve() {
        let mut seen = std::collections::HashSet::new();
        for t in TABLES {
            assert!(seen.insert(t.name), "table {} twice", t.name);
            let mut cols = std::collections::HashSet::new();
            for c in t.columns() {
                assert!(cols.insert(c.name), "{}.{} twice", t.name, c.name);
                assert!(!c.doc.is_empty(), "{}.{} has no text", t.name, c.name);
                if let Type::Record(r) | Type::Records(r) = c.ty {
                    assert!(table(r).is_some(), "{}.{} refers to a missing table {r}", t.name, c.name);
                }
            }
        }
    }

    #[test]
    fn units_follow_the_names() {
        // A name ending in a unit has that unit (the schema and the name cannot disagree).
        for t in TABLES {
            for c in t.columns() {
                for (suffix, unit) in [("_s", "s"), ("_ms", "ms"), ("_mbps", "Mbps"), ("_bytes", "bytes"), ("_pkts", "pkts")] {
                    if c.name.ends_with(suffix) {
                        assert_eq!(c.unit, unit, "{}.{}", t.name, c.name);
                    }
                }
            }
        }
    }

    #[test]
    fn json_lists_every_table() {
        let j = to_json();
        let names: Vec<&str> = j.as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
        assert_eq!(names, TABLES.iter().map(|t| t.name).collect::<Vec<_>>());
        let flows = &j[1]["columns"];
        assert_eq!(flows[0]["name"], "id");
        assert_eq!(flows[0]["type"], "int");
        let path = flows.as_array().unwrap().iter().find(|c| c["name"] == "path").unwrap();
        assert_eq!(path["type"], "list[str]");
    }
}
