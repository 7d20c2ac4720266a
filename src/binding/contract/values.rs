//! How each Rust type of a declaration crosses: `FromJs` reads an argument or an object field
//! JS passed (and says what it must be when it does not fit), `ToJs` makes the value a
//! callback gets. Each type knows its TypeScript spelling, so the declarations' types are the
//! only source of the generated `native.d.ts`.

use super::super::napi::{self, Args, Env, Value};
use ::napi::sys;
use std::ptr;

/// Why a value does not fit its declared type: where in it (`.field`, `[i]`; empty for the
/// value itself), and what was wrong.
#[derive(Debug)]
pub struct Misfit {
    pub path: String,
    pub what: Why,
}

#[derive(Debug)]
pub enum Why {
    /// It must be `want` and is `got` (`"nothing"` when absent).
    Type { want: String, got: &'static str },
    /// An object field no declaration names (a misspelt one).
    Unknown { of: &'static str },
}

impl Misfit {
    pub fn wrong<T: FromJs>(env: Env, v: Option<Value>) -> Misfit {
        Misfit {
            path: String::new(),
            what: Why::Type {
                want: T::ts(),
                got: v.map_or("nothing", |v| kind_name(typeof_(env, v))),
            },
        }
    }

    /// The same misfit, found inside `outer` (a field name or an index).
    pub fn within(mut self, outer: &str) -> Misfit {
        self.path = format!("{outer}{}", self.path);
        self
    }

    /// The message of a misfit of the argument or field called `name`.
    pub fn message(&self, name: &str) -> String {
        match &self.what {
            Why::Type { want, got } if self.path.is_empty() => {
                format!("argument '{name}' must be {want}, got {got}")
            }
            Why::Type { want, got } => format!("{name}{} must be {want}, got {got}", self.path),
            Why::Unknown { of } => format!("{name}{} is not a field of {of}", self.path),
        }
    }
}

pub fn typeof_(env: Env, v: Value) -> sys::napi_valuetype {
    let mut t = sys::ValueType::napi_undefined;
    // SAFETY: v is a live value of the current call.
    unsafe { sys::napi_typeof(env, v, &mut t) };
    t
}

pub fn kind_name(t: sys::napi_valuetype) -> &'static str {
    use sys::ValueType as V;
    match t {
        V::napi_undefined => "undefined",
        V::napi_null => "null",
        V::napi_boolean => "a boolean",
        V::napi_number => "a number",
        V::napi_string => "a string",
        V::napi_symbol => "a symbol",
        V::napi_function => "a function",
        V::napi_bigint => "a bigint",
        _ => "an object",
    }
}

fn nullish(env: Env, v: Option<Value>) -> bool {
    v.is_none_or(|v| {
        let t = typeof_(env, v);
        t == sys::ValueType::napi_undefined || t == sys::ValueType::napi_null
    })
}

/// A value JS passes, read into a Rust type. `v` is None when the argument was not passed
/// (or the field is absent).
pub trait FromJs: Sized {
    /// The TypeScript type JS must pass.
    fn ts() -> String;
    fn from_js(env: Env, v: Option<Value>) -> Result<Self, Misfit>;
    /// Whether an object field of this type may be absent (`name?:` in TypeScript).
    const OPTIONAL: bool = false;
    /// Whether an argument of this type takes every argument from its place on (`Rest`).
    const REST: bool = false;
    /// The argument at `i` of a call.
    fn from_args(a: &Args, i: usize) -> Result<Self, Misfit> {
        Self::from_js(a.env, a.get(i))
    }
}

/// The last argument of a call that takes any number of values (`...values: unknown[]`):
/// a batch passed as arguments, which V8 hands over in one step, where reading a JS array
/// takes an N-API call per element.
pub struct Rest(pub Vec<Value>);

impl FromJs for Rest {
    fn ts() -> String {
        "...unknown[]".into()
    }
    fn from_js(_env: Env, v: Option<Value>) -> Result<Rest, Misfit> {
        Ok(Rest(v.into_iter().collect()))
    }
    const REST: bool = true;
    fn from_args(a: &Args, i: usize) -> Result<Rest, Misfit> {
        Ok(Rest(a.from(i).to_vec()))
    }
}

/// Where an event's numbers go: the array shared with JS, from `at` on. The caller makes
/// sure an event's numbers fit (`MAX_EVENT_NUMBERS`).
pub struct Numbers<'a> {
    pub slots: &'a mut [f64],
    pub at: usize,
}

/// The most numbers one event carries (its kind and its numeric fields).
pub const MAX_EVENT_NUMBERS: usize = 16;

impl Numbers<'_> {
    #[inline]
    pub fn push(&mut self, v: f64) {
        self.slots[self.at] = v;
        self.at += 1;
    }
}

/// A value a callback passes to JS.
pub trait ToJs {
    fn ts() -> String;
    fn to_js(&self, env: Env) -> Value;
    /// Whether a batch carries it as a number (`number`), not as a JS value.
    const NUMERIC: bool = false;
    fn number(&self) -> f64 {
        0.0
    }
    /// Adds it to an event's numbers or values.
    fn add_to(&self, env: Env, nums: &mut Numbers<'_>, vals: &mut Vec<Value>) {
        if Self::NUMERIC {
            nums.push(self.number());
        } else {
            vals.push(self.to_js(env));
        }
    }
}

fn number(env: Env, v: Option<Value>) -> Option<f64> {
    let v = v?;
    let mut out = 0.0;
    // SAFETY: v is a live value; a non-number is refused by the status.
    let status = unsafe { sys::napi_get_value_double(env, v, &mut out) };
    (status == sys::Status::napi_ok).then_some(out)
}

impl FromJs for f64 {
    fn ts() -> String {
        "number".into()
    }
    fn from_js(env: Env, v: Option<Value>) -> Result<f64, Misfit> {
        match number(env, v) {
            Some(n) => Ok(if n.is_nan() { 0.0 } else { n }),
            None => Err(Misfit::wrong::<f64>(env, v)),
        }
    }
}

impl FromJs for u32 {
    fn ts() -> String {
        "number".into()
    }
    fn from_js(env: Env, v: Option<Value>) -> Result<u32, Misfit> {
        let mut out = 0u32;
        // SAFETY: v is a live value; a non-number is refused by the status. JS's ToUint32.
        let ok = v.is_some_and(|v| unsafe {
            sys::napi_get_value_uint32(env, v, &mut out) == sys::Status::napi_ok
        });
        if ok {
            Ok(out)
        } else {
            Err(Misfit::wrong::<u32>(env, v))
        }
    }
}

/// A connection id: a double holding a slot index and a generation, exact up to 2^53.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Id(pub u64);

impl FromJs for Id {
    fn ts() -> String {
        "number".into()
    }
    fn from_js(env: Env, v: Option<Value>) -> Result<Id, Misfit> {
        f64::from_js(env, v).map(|n| Id(n as u64))
    }
}

impl ToJs for Id {
    const NUMERIC: bool = true;
    fn number(&self) -> f64 {
        self.0 as f64
    }
    fn ts() -> String {
        "number".into()
    }
    fn to_js(&self, env: Env) -> Value {
        napi::f64v(env, self.0 as f64)
    }
}

impl FromJs for bool {
    fn ts() -> String {
        "boolean".into()
    }
    fn from_js(env: Env, v: Option<Value>) -> Result<bool, Misfit> {
        let mut out = false;
        // SAFETY: v is a live value; a non-boolean is refused by the status.
        let ok = v.is_some_and(|v| unsafe {
            sys::napi_get_value_bool(env, v, &mut out) == sys::Status::napi_ok
        });
        if ok {
            Ok(out)
        } else {
            Err(Misfit::wrong::<bool>(env, v))
        }
    }
}

/// A JS string, read when and as the code needs it (latin1 into a response's buffer, UTF-8).
#[derive(Clone, Copy)]
pub struct JsStr {
    pub env: Env,
    pub v: Value,
}

impl JsStr {
    pub fn latin1_into(&self, out: &mut Vec<u8>) {
        napi::string_into(self.env, self.v, out, napi::Encoding::Latin1);
    }

    pub fn utf8_into(&self, out: &mut Vec<u8>) {
        napi::string_into(self.env, self.v, out, napi::Encoding::Utf8);
    }

    /// The string as UTF-8.
    pub fn string(&self) -> String {
        let mut v = Vec::new();
        self.utf8_into(&mut v);
        String::from_utf8(v).unwrap_or_default()
    }
}

impl FromJs for JsStr {
    fn ts() -> String {
        "string".into()
    }
    fn from_js(env: Env, v: Option<Value>) -> Result<JsStr, Misfit> {
        match v {
            Some(v) if typeof_(env, v) == sys::ValueType::napi_string => Ok(JsStr { env, v }),
            _ => Err(Misfit::wrong::<JsStr>(env, v)),
        }
    }
}

/// An owned string field (UTF-8).
impl FromJs for String {
    fn ts() -> String {
        "string".into()
    }
    fn from_js(env: Env, v: Option<Value>) -> Result<String, Misfit> {
        JsStr::from_js(env, v)
            .map(|s| s.string())
            .map_err(|_| Misfit::wrong::<String>(env, v))
    }
}

/// A string field kept as latin1 bytes (header text, protocol names).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Latin1(pub Vec<u8>);

impl FromJs for Latin1 {
    fn ts() -> String {
        "string".into()
    }
    fn from_js(env: Env, v: Option<Value>) -> Result<Latin1, Misfit> {
        let s = JsStr::from_js(env, v).map_err(|_| Misfit::wrong::<Latin1>(env, v))?;
        let mut out = Vec::new();
        s.latin1_into(&mut out);
        Ok(Latin1(out))
    }
}

impl<T: FromJs> FromJs for Option<T> {
    fn ts() -> String {
        format!("{} | undefined | null", T::ts())
    }
    fn from_js(env: Env, v: Option<Value>) -> Result<Option<T>, Misfit> {
        if nullish(env, v) {
            return Ok(None);
        }
        T::from_js(env, v).map(Some)
    }
    const OPTIONAL: bool = true;
}

/// The bytes of a Buffer / TypedArray argument, valid for the call.
impl FromJs for &[u8] {
    fn ts() -> String {
        "Uint8Array".into()
    }
    fn from_js(env: Env, v: Option<Value>) -> Result<Self, Misfit> {
        v.and_then(|v| napi::bytes_of(env, v))
            .ok_or_else(|| Misfit::wrong::<&[u8]>(env, v))
    }
}

/// Bytes of a Buffer / TypedArray kept (object fields: certificates, keys).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Bytes(pub Vec<u8>);

impl FromJs for Bytes {
    fn ts() -> String {
        "Uint8Array".into()
    }
    fn from_js(env: Env, v: Option<Value>) -> Result<Bytes, Misfit> {
        <&[u8]>::from_js(env, v)
            .map(|b| Bytes(b.to_vec()))
            .map_err(|_| Misfit::wrong::<Bytes>(env, v))
    }
}

/// A response body or a socket write: a string, or a Buffer / TypedArray (with its value, so
/// a large one can be kept alive and written from its own memory).
#[derive(Clone, Copy)]
pub enum Chunk<'a> {
    Bytes(&'a [u8], Value),
    Str(JsStr),
}

impl FromJs for Chunk<'_> {
    fn ts() -> String {
        "string | Uint8Array".into()
    }
    fn from_js(env: Env, v: Option<Value>) -> Result<Self, Misfit> {
        if let Ok(s) = JsStr::from_js(env, v) {
            return Ok(Chunk::Str(s));
        }
        match v.and_then(|v| napi::bytes_of(env, v).map(|b| (b, v))) {
            Some((b, v)) => Ok(Chunk::Bytes(b, v)),
            None => Err(Misfit::wrong::<Chunk>(env, v)),
        }
    }
}

impl<T: FromJs> FromJs for Vec<T> {
    fn ts() -> String {
        format!("Array<{}>", T::ts())
    }
    fn from_js(env: Env, v: Option<Value>) -> Result<Vec<T>, Misfit> {
        let arr = match v {
            Some(arr) if napi::is_array(env, arr) => arr,
            _ => return Err(Misfit::wrong::<Vec<T>>(env, v)),
        };
        (0..napi::array_len(env, arr))
            .map(|i| {
                T::from_js(env, Some(napi::element(env, arr, i)))
                    .map_err(|m| m.within(&format!("[{i}]")))
            })
            .collect()
    }
}

impl<A: FromJs, B: FromJs> FromJs for (A, B) {
    fn ts() -> String {
        format!("[{}, {}]", A::ts(), B::ts())
    }
    fn from_js(env: Env, v: Option<Value>) -> Result<(A, B), Misfit> {
        match v {
            Some(arr) if napi::is_array(env, arr) && napi::array_len(env, arr) == 2 => Ok((
                A::from_js(env, Some(napi::element(env, arr, 0))).map_err(|m| m.within("[0]"))?,
                B::from_js(env, Some(napi::element(env, arr, 1))).map_err(|m| m.within("[1]"))?,
            )),
            _ => Err(Misfit::wrong::<(A, B)>(env, v)),
        }
    }
}

/// Any object (read by the code that takes it).
#[derive(Clone, Copy)]
pub struct JsObject(pub Value);

impl FromJs for JsObject {
    fn ts() -> String {
        "object".into()
    }
    fn from_js(env: Env, v: Option<Value>) -> Result<JsObject, Misfit> {
        match v {
            Some(v) if typeof_(env, v) == sys::ValueType::napi_object => Ok(JsObject(v)),
            _ => Err(Misfit::wrong::<JsObject>(env, v)),
        }
    }
}

/// The own enumerable string keys of an object.
pub fn own_keys(env: Env, obj: Value) -> Vec<String> {
    let mut names = ptr::null_mut();
    // SAFETY: obj is a live object of the current call.
    let status = unsafe {
        sys::napi_get_all_property_names(
            env,
            obj,
            sys::KeyCollectionMode::own_only,
            sys::KeyFilter::enumerable | sys::KeyFilter::skip_symbols,
            sys::KeyConversion::numbers_to_strings,
            &mut names,
        )
    };
    if status != sys::Status::napi_ok {
        return Vec::new();
    }
    (0..napi::array_len(env, names))
        .map(|i| JsStr {
            env,
            v: napi::element(env, names, i),
        })
        .map(|s| s.string())
        .collect()
}

/// A number or boolean a batch carries in the shared array: its value as a double, its
/// TypeScript type, and the JS value a direct call passes.
macro_rules! numeric {
    ($($ty:ty => $ts:literal, |$v:ident| $num:expr, $make:path;)*) => {$(
        impl ToJs for $ty {
            const NUMERIC: bool = true;
            fn number(&self) -> f64 {
                let $v = *self;
                $num
            }
            fn ts() -> String {
                $ts.into()
            }
            fn to_js(&self, env: Env) -> Value {
                $make(env, *self)
            }
        }
    )*};
}

numeric! {
    u32 => "number", |v| f64::from(v), napi::u32v;
    i32 => "number", |v| f64::from(v), napi::i32v;
    f64 => "number", |v| v, napi::f64v;
    bool => "boolean", |v| f64::from(u8::from(v)), napi::boolean;
}

impl ToJs for &str {
    fn ts() -> String {
        "string".into()
    }
    fn to_js(&self, env: Env) -> Value {
        napi::utf8(env, self)
    }
}

/// Bytes that JS gets as a latin1 string (request heads: one unit per byte, as node's parser
/// gives them).
#[derive(Clone, Copy)]
pub struct Text<'a>(pub &'a [u8]);

impl ToJs for Text<'_> {
    fn ts() -> String {
        "string".into()
    }
    fn to_js(&self, env: Env) -> Value {
        napi::latin1(env, self.0)
    }
}

/// Bytes that JS gets as a new Buffer.
impl ToJs for &[u8] {
    fn ts() -> String {
        "Buffer".into()
    }
    fn to_js(&self, env: Env) -> Value {
        napi::buffer_copy(env, self)
    }
}

impl<T: ToJs> ToJs for Option<T> {
    fn ts() -> String {
        format!("{} | undefined", T::ts())
    }
    fn to_js(&self, env: Env) -> Value {
        match self {
            Some(v) => v.to_js(env),
            None => napi::undefined(env),
        }
    }
}

impl<T: ToJs> ToJs for Vec<T> {
    fn ts() -> String {
        format!("Array<{}>", T::ts())
    }
    fn to_js(&self, env: Env) -> Value {
        let items: Vec<Value> = self.iter().map(|v| v.to_js(env)).collect();
        napi::array(env, &items)
    }
}

/// A value, or `false` where node's API answers false for none (servername, ALPN protocol,
/// authorizationError).
pub struct OrFalse<T>(pub Option<T>);

impl<T: ToJs> ToJs for OrFalse<T> {
    fn ts() -> String {
        format!("{} | false", T::ts())
    }
    fn to_js(&self, env: Env) -> Value {
        match &self.0 {
            Some(v) => v.to_js(env),
            None => napi::boolean(env, false),
        }
    }
}

/// A Float64Array JS shares with the addon: its memory, written by the addon between calls
/// into JS, and the array itself (to hold it).
#[derive(Clone, Copy)]
pub struct SharedF64 {
    pub value: Value,
    pub data: *mut f64,
    pub len: usize,
}

impl FromJs for SharedF64 {
    fn ts() -> String {
        "Float64Array".into()
    }
    fn from_js(env: Env, v: Option<Value>) -> Result<SharedF64, Misfit> {
        let wrong = || Misfit::wrong::<SharedF64>(env, v);
        let v = v.ok_or_else(wrong)?;
        if !napi::is_typed_array(env, v) {
            return Err(wrong());
        }
        let (kind, data, len) = napi::typed_array(env, v);
        if kind != sys::TypedarrayType::float64_array || data.is_null() || len == 0 {
            return Err(wrong());
        }
        Ok(SharedF64 {
            value: v,
            data: data as *mut f64,
            len,
        })
    }
}
