//! The types the checker reasons with: cel-go's `common/types` `Type` as
//! far as kube's expressions see them, `FormatCelType` (`checker/format.go`)
//! for the messages, and the assignability rules of `checker/types.go`
//! (`internalIsAssignable`, `isTypeParamAssignable`, `mostGeneral`).

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

/// A CEL type.
#[derive(Clone, Debug)]
pub enum Type {
    Dyn,
    /// The type of an expression that failed to check (`*error*`): assignable
    /// everywhere, so one mistake is reported once.
    Error,
    Null,
    Bool,
    Int,
    Uint,
    Double,
    String,
    Bytes,
    Duration,
    Timestamp,
    List(Box<Type>),
    Map(Box<Type>, Box<Type>),
    /// An object of a schema (kube's `DeclType` object, a struct to cel-go).
    Object(Object),
    /// An opaque type of a library (`kubernetes.Quantity`, `net.IP`,
    /// `optional_type`), with its parameters.
    Opaque(&'static str, Vec<Type>),
    /// `type(T)`: the type of a type value.
    TypeOf(Box<Type>),
    /// A type parameter: `A` of an overload, or a free variable (`_var0`).
    Param(Arc<str>),
}

/// The fields of an object, found when first asked: schemas can be large
/// (and built-in OpenAPI recursive), a check reads only a few fields.
pub trait Fields: Send + Sync + fmt::Debug {
    /// The type of field `name`, `None` when the object does not declare it.
    fn field(&self, name: &str) -> Option<Type>;
}

/// A named object type.
#[derive(Clone, Debug)]
pub struct Object {
    /// The type name, unique per object schema: two objects are the same
    /// type when their names are equal (as cel-go compares struct types).
    pub name: Arc<str>,
    pub fields: Arc<dyn Fields>,
}

/// Fields listed in full: for composed objects such as `variables`.
#[derive(Debug, Default)]
pub struct FieldTable(pub BTreeMap<String, Type>);

impl Fields for FieldTable {
    fn field(&self, name: &str) -> Option<Type> {
        self.0.get(name).cloned()
    }
}

impl Type {
    pub fn list(element: Type) -> Type {
        Type::List(Box::new(element))
    }

    pub fn map(key: Type, value: Type) -> Type {
        Type::Map(Box::new(key), Box::new(value))
    }

    pub fn optional(inner: Type) -> Type {
        Type::Opaque("optional_type", vec![inner])
    }

    pub fn is_dyn_or_error(&self) -> bool {
        matches!(self, Type::Dyn | Type::Error)
    }

    /// Whether a check of this type must give way to runtime: `dyn`,
    /// errors and unbound parameters.
    pub fn is_error(&self) -> bool {
        matches!(self, Type::Error)
    }

    /// The kind name cel-go compares in `IsExactType`.
    fn same_kind(&self, other: &Type) -> bool {
        std::mem::discriminant(self) == std::mem::discriminant(other)
    }

    /// Whether `self` is exactly `other` (`Type.IsExactType`).
    pub fn is_exact(&self, other: &Type) -> bool {
        match (self, other) {
            (Type::List(a), Type::List(b)) => a.is_exact(b),
            (Type::Map(ak, av), Type::Map(bk, bv)) => ak.is_exact(bk) && av.is_exact(bv),
            (Type::Object(a), Type::Object(b)) => a.name == b.name,
            (Type::Opaque(a, ap), Type::Opaque(b, bp)) => {
                a == b && ap.len() == bp.len() && ap.iter().zip(bp).all(|(x, y)| x.is_exact(y))
            }
            (Type::TypeOf(a), Type::TypeOf(b)) => a.is_exact(b),
            (Type::Param(a), Type::Param(b)) => a == b,
            _ => self.same_kind(other),
        }
    }

    /// `isNullable` of cel-go's checker: null goes where a message, a
    /// well-known type or `dyn` is expected.
    fn is_nullable(&self) -> bool {
        matches!(
            self,
            Type::Null | Type::Object(_) | Type::Dyn | Type::Duration | Type::Timestamp
        ) || matches!(self, Type::Opaque("optional_type", _))
    }
}

impl fmt::Display for Type {
    /// `FormatCelType`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Type::Dyn => f.write_str("dyn"),
            Type::Error => f.write_str("*error*"),
            Type::Null => f.write_str("null_type"),
            Type::Bool => f.write_str("bool"),
            Type::Int => f.write_str("int"),
            Type::Uint => f.write_str("uint"),
            Type::Double => f.write_str("double"),
            Type::String => f.write_str("string"),
            Type::Bytes => f.write_str("bytes"),
            Type::Duration => f.write_str("google.protobuf.Duration"),
            Type::Timestamp => f.write_str("google.protobuf.Timestamp"),
            Type::List(element) => write!(f, "list({element})"),
            Type::Map(key, value) => write!(f, "map({key}, {value})"),
            Type::Object(object) => f.write_str(&object.name),
            Type::Opaque(name, parameters) if parameters.is_empty() => f.write_str(name),
            Type::Opaque(name, parameters) => {
                write!(f, "{name}(")?;
                for (index, parameter) in parameters.iter().enumerate() {
                    if index > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{parameter}")?;
                }
                f.write_str(")")
            }
            Type::TypeOf(inner) => write!(f, "type({inner})"),
            Type::Param(name) => f.write_str(name),
        }
    }
}

/// The bindings of type parameters found while checking (`mapping.go`).
#[derive(Clone, Debug, Default)]
pub struct Mapping(BTreeMap<Arc<str>, Type>);

impl Mapping {
    fn find(&self, name: &str) -> Option<&Type> {
        self.0.get(name)
    }

    fn add(&mut self, name: Arc<str>, bound: Type) {
        self.0.insert(name, bound);
    }

    /// `substitute`: `t` with its bound parameters replaced; unbound ones
    /// become `dyn` when `params_to_dyn`.
    pub fn substitute(&self, t: &Type, params_to_dyn: bool) -> Type {
        self.substitute_depth(t, params_to_dyn, 0)
    }

    fn substitute_depth(&self, t: &Type, params_to_dyn: bool, depth: usize) -> Type {
        // A binding cycle cannot form (`notReferencedIn`); the bound is a guard.
        if depth > 64 {
            return Type::Dyn;
        }
        let again = |inner: &Type| self.substitute_depth(inner, params_to_dyn, depth + 1);
        match t {
            Type::Param(name) => match self.find(name) {
                Some(bound) => again(bound),
                None if params_to_dyn => Type::Dyn,
                None => t.clone(),
            },
            Type::List(element) => Type::list(again(element)),
            Type::Map(key, value) => Type::map(again(key), again(value)),
            Type::Opaque(name, parameters) => {
                Type::Opaque(name, parameters.iter().map(again).collect())
            }
            Type::TypeOf(inner) => Type::TypeOf(Box::new(again(inner))),
            other => other.clone(),
        }
    }

    /// `isAssignable(m, t1, t2)`: whether a value of `t2` can go where
    /// `t1` is expected, binding parameters on the way.
    pub fn is_assignable(&mut self, t1: &Type, t2: &Type) -> bool {
        let mut trial = self.clone();
        if trial.assignable(t1, t2, 0) {
            *self = trial;
            true
        } else {
            false
        }
    }

    fn assignable(&mut self, t1: &Type, t2: &Type, depth: usize) -> bool {
        if depth > 64 {
            return true;
        }
        if let Some(found) = self.param_assignable(t1, t2, depth) {
            return found;
        }
        if t1.is_dyn_or_error() || t2.is_dyn_or_error() {
            return true;
        }
        if matches!(t1, Type::Null) {
            return t2.is_nullable();
        }
        if matches!(t2, Type::Null) {
            return t1.is_nullable();
        }
        match (t1, t2) {
            (Type::TypeOf(_), other) => matches!(other, Type::TypeOf(_)),
            (Type::List(a), Type::List(b)) => self.assignable(a, b, depth + 1),
            (Type::Map(ak, av), Type::Map(bk, bv)) => {
                self.assignable(ak, bk, depth + 1) && self.assignable(av, bv, depth + 1)
            }
            (Type::Opaque(a, ap), Type::Opaque(b, bp)) => {
                a == b
                    && ap.len() == bp.len()
                    && ap
                        .iter()
                        .zip(bp)
                        .all(|(x, y)| self.assignable(x, y, depth + 1))
            }
            (Type::Object(a), Type::Object(b)) => a.name == b.name,
            _ => t1.same_kind(t2) && !matches!(t1, Type::List(_) | Type::Map(..)),
        }
    }

    /// `isTypeParamAssignable`.
    fn param_assignable(&mut self, t1: &Type, t2: &Type, depth: usize) -> Option<bool> {
        if let Type::Param(name) = t1 {
            if let Type::Param(other) = t2 {
                if name == other {
                    return Some(true);
                }
            }
            if let Some(bound) = self.find(name).cloned() {
                if self.assignable(&bound, t2, depth + 1) {
                    let general = most_general(&bound, t2);
                    self.add(name.clone(), general);
                    return Some(true);
                }
                return Some(false);
            }
            if !self.references(name, t2) {
                self.add(name.clone(), t2.clone());
                return Some(true);
            }
        }
        if let Type::Param(name) = t2 {
            if let Some(bound) = self.find(name).cloned() {
                if self.assignable(t1, &bound, depth + 1) {
                    let general = most_general(t1, &bound);
                    self.add(name.clone(), general);
                    return Some(true);
                }
                return Some(false);
            }
            if !self.references(name, t1) {
                self.add(name.clone(), t1.clone());
                return Some(true);
            }
        }
        None
    }

    /// `notReferencedIn`, negated.
    fn references(&self, name: &str, t: &Type) -> bool {
        match t {
            Type::Param(other) => {
                &**other == name
                    || self
                        .find(other)
                        .is_some_and(|bound| self.references(name, bound))
            }
            Type::List(element) => self.references(name, element),
            Type::Map(key, value) => self.references(name, key) || self.references(name, value),
            Type::Opaque(_, parameters) => parameters.iter().any(|p| self.references(name, p)),
            Type::TypeOf(inner) => self.references(name, inner),
            _ => false,
        }
    }
}

/// `mostGeneral`: of two assignable types, the less specific one.
fn most_general(a: &Type, b: &Type) -> Type {
    if less_specific_or_equal(a, b) {
        a.clone()
    } else {
        b.clone()
    }
}

/// `isEqualOrLessSpecific`.
fn less_specific_or_equal(a: &Type, b: &Type) -> bool {
    match (a, b) {
        (Type::Dyn | Type::Param(_), _) => true,
        (_, Type::Dyn | Type::Param(_)) => false,
        (Type::List(x), Type::List(y)) => less_specific_or_equal(x, y),
        (Type::Map(ak, av), Type::Map(bk, bv)) => {
            less_specific_or_equal(ak, bk) && less_specific_or_equal(av, bv)
        }
        (Type::TypeOf(x), Type::TypeOf(y)) => less_specific_or_equal(x, y),
        (Type::Opaque(_, xs), Type::Opaque(_, ys)) => {
            xs.iter().zip(ys).all(|(x, y)| less_specific_or_equal(x, y))
        }
        _ => a.is_exact(b),
    }
}
