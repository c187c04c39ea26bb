//! The static cost limits of a CRD's `x-kubernetes-validations`, checked
//! when the CRD is written: apiextensions
//! `pkg/apis/apiextensions/validation/validation.go`
//! (`StaticEstimatedCostLimit` per expression, times the number of times
//! the rule can run, `StaticEstimatedCRDCostLimit` for the whole schema,
//! `getCostErrorMessage`), with the estimate of `cel_env::cost_estimate`
//! made on the parser's thread (`cel_syntax::check_then`).

use serde_json::Value;

use crate::cel_env::cost_estimate;

/// `StaticEstimatedCostLimit`.
pub const STATIC_ESTIMATED_COST_LIMIT: u64 = 10_000_000;
/// `StaticEstimatedCRDCostLimit`.
pub const STATIC_ESTIMATED_CRD_COST_LIMIT: u64 = 100_000_000;
/// How many of the most expensive rules kube names when the total is over
/// (`TotalCost.MostExpensive`).
const MOST_EXPENSIVE: usize = 4;

/// `getCostErrorMessage`.
pub fn cost_error_message(cost_name: &str, expected: u64, limit: u64) -> String {
    let exceed_factor = expected as f64 / limit as f64;
    let factor = if exceed_factor > 100.0 {
        "more than 100x".to_string()
    } else if exceed_factor < 1.5 {
        format!("{exceed_factor:.6}x")
    } else {
        format!("{exceed_factor:.1}x")
    };
    format!("{cost_name} exceeds budget by factor of {factor} (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)")
}

/// `getExpressionCost`: the rule's cost times how often it can run, the
/// schema's cardinality when bounded, else the most values of this
/// schema a request can hold.
pub fn expression_cost(cost: u64, cardinality: Option<u64>, schema: &Value) -> u64 {
    let times = cardinality.unwrap_or_else(|| {
        cost_estimate::max_cardinality(cost_estimate::min_serialized_size(schema))
    });
    cost.saturating_mul(times)
}

/// `TotalCost`: the costs of every rule of one schema.
#[derive(Debug, Default)]
pub struct TotalCost {
    total: u64,
    /// (rule path, cost), the most expensive first.
    most_expensive: Vec<(String, u64)>,
}

impl TotalCost {
    /// `ObserveExpressionCost`.
    pub fn observe(&mut self, path: String, cost: u64) {
        self.total = self.total.saturating_add(cost);
        let at = self
            .most_expensive
            .iter()
            .position(|(_, existing)| *existing < cost)
            .unwrap_or(self.most_expensive.len());
        self.most_expensive.insert(at, (path, cost));
        self.most_expensive.truncate(MOST_EXPENSIVE);
    }

    /// kube's errors when the total is over `StaticEstimatedCRDCostLimit`:
    /// each of the most expensive rules, then the schema at `path`.
    pub fn errors(&self, path: &str) -> Vec<crate::status::FieldError> {
        if self.total <= STATIC_ESTIMATED_CRD_COST_LIMIT {
            return Vec::new();
        }
        let mut errors: Vec<_> = self
            .most_expensive
            .iter()
            .map(|(rule, _)| {
                crate::status::FieldError::forbidden(
                    rule,
                    "contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema",
                )
            })
            .collect();
        errors.push(crate::status::FieldError::forbidden(
            path,
            cost_error_message(
                "x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema",
                self.total,
                STATIC_ESTIMATED_CRD_COST_LIMIT,
            ),
        ));
        errors
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kubes_cost_error_factors() {
        let tail = "(try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)";
        assert_eq!(
            cost_error_message("estimated rule cost", 2_000_000_000, 10_000_000),
            format!("estimated rule cost exceeds budget by factor of more than 100x {tail}")
        );
        assert_eq!(
            cost_error_message("estimated rule cost", 12_000_000, 10_000_000),
            format!("estimated rule cost exceeds budget by factor of 1.200000x {tail}")
        );
        assert_eq!(
            cost_error_message("estimated rule cost", 25_000_000, 10_000_000),
            format!("estimated rule cost exceeds budget by factor of 2.5x {tail}")
        );
    }

    #[test]
    fn the_total_names_the_four_most_expensive_rules() {
        let mut total = TotalCost::default();
        for (index, cost) in [30_000_000, 1, 40_000_000, 20_000_000, 25_000_000]
            .iter()
            .enumerate()
        {
            total.observe(format!("rule{index}"), *cost);
        }
        let errors = total.errors("root");
        let paths: Vec<&str> = errors.iter().map(|error| error.field.as_str()).collect();
        assert_eq!(paths, ["rule2", "rule0", "rule4", "rule3", "root"]);
    }
}
