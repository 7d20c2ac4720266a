//! What crosses between JS and the addon, declared once per crossing (`super::crossings`):
//! the macros here turn each declaration into the Rust that reads or builds it by name and
//! into the description JS gets as `binding.contract`, which `scripts/check-contract.js`
//! renders as `lib/internal/native.d.ts` and type-checks lib/ against.
//!
//! - `exports!`: per function JS calls, a struct of its named arguments (read and checked in
//!   one step: a missing, extra or mistyped argument throws ERR_INVALID_ARG_TYPE instead of
//!   reading as 0) and its entry in `EXPORTS`.
//! - `js_object!`: an object argument (server options, a TLS context's settings) as a struct;
//!   a field no declaration names, a missing required field or a mistyped one is an error.
//! - `callbacks!`: per callback JS registers, a struct of its named arguments that builds the
//!   call's argument list, and its entry in `CALLBACKS`.
//! - `constants!`: the named values both sides use in place of sentinel numbers.

pub mod values;

use super::napi::{self, Args, Env, Value};
pub use values::{FromJs, Misfit, ToJs};

/// A declared argument, object field or callback argument: its Rust name (JS sees it in
/// camelCase), its TypeScript type, whether it may be absent (object fields), and whether an
/// event carries it as a number (the rest are JS values).
pub struct Field {
    pub name: &'static str,
    pub ts: fn() -> String,
    pub optional: bool,
    pub numeric: bool,
}

/// The declaration of a field JS passes.
pub const fn from_js<T: FromJs>(name: &'static str) -> Field {
    Field {
        name,
        ts: T::ts,
        optional: T::OPTIONAL,
        numeric: false,
    }
}

/// The declaration of a field the addon passes.
pub const fn to_js<T: ToJs>(name: &'static str) -> Field {
    Field {
        name,
        ts: T::ts,
        optional: false,
        numeric: T::NUMERIC,
    }
}

/// An exported function: its Rust name, its arguments, what it returns (TypeScript), and the
/// code (its arguments read first).
pub struct Export {
    pub name: &'static str,
    pub args: &'static [Field],
    pub ret: &'static str,
    pub f: fn(Args) -> Value,
    /// Calls count as JS → native crossings (not the introspection the counting test uses).
    pub counted: bool,
}

/// A callback JS registers with `init`: its Rust name, arguments and return type, and
/// whether it is an event (handed over in batches, `Encode`) or called directly (`Invoke`).
pub struct Callback {
    pub name: &'static str,
    pub args: &'static [Field],
    pub ret: fn() -> String,
    pub event: bool,
}

/// A named TypeScript type of the contract (objects both ways, tuples).
pub struct NamedType {
    pub name: &'static str,
    pub ts: fn() -> String,
}

/// `snake_case` → `camelCase`: the one spelling rule between the two sides.
pub fn camel(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut up = false;
    for c in name.chars() {
        if c == '_' {
            up = true;
        } else if up {
            out.extend(c.to_uppercase());
            up = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// Throws the TypeError of a call whose arguments do not fit.
pub fn refuse(env: Env, export: &str, msg: &str) -> Value {
    let msg = format!("fast-http: {}(): {msg}", camel(export));
    napi::throw_type_error(env, "ERR_INVALID_ARG_TYPE", &msg);
    std::ptr::null_mut()
}

/// The message for a call with more arguments than declared.
pub fn too_many(declared: usize, got: usize) -> String {
    format!("takes {declared} arguments, got {got}")
}

/// Declares the functions JS calls. Each line:
/// `fn name(ArgsStruct { field: Type, ... }) -> "ts return" => path::to::code;`
/// (`=> code, uncounted;` for introspection that does not count as a crossing). The code is
/// `fn(ArgsStruct) -> Value`; the struct has the call's `env` too.
macro_rules! exports {
    ($(
        $(#[cfg($cfg:meta)])?
        $(#[doc = $doc:literal])*
        fn $name:ident($args:ident { $($field:ident : $fty:ty),* $(,)? })
            -> $ret:literal => $code:path $(, $uncounted:ident)?;
    )*) => {
        $(
            $(#[cfg($cfg)])?
            $(#[doc = $doc])*
            pub struct $args<'a> {
                pub env: $crate::binding::napi::Env,
                $(pub $field: $fty,)*
                _call: ::std::marker::PhantomData<&'a ()>,
            }

            $(#[cfg($cfg)])?
            impl<'a> $args<'a> {
                pub const ARGS: &'static [$crate::binding::contract::Field] = &[
                    $($crate::binding::contract::from_js::<$fty>(stringify!($field)),)*
                ];

                /// The last argument takes all the rest (`Rest`).
                const REST: bool = false
                    $(|| <$fty as $crate::binding::contract::FromJs>::REST)*;

                #[allow(unused_assignments, unused_mut, unused_variables)]
                fn read(a: &'a $crate::binding::napi::Args) -> Result<Self, String> {
                    if !Self::REST && a.argc > Self::ARGS.len() {
                        return Err($crate::binding::contract::too_many(Self::ARGS.len(), a.argc));
                    }
                    let mut i = 0usize;
                    Ok($args {
                        env: a.env,
                        $($field: {
                            let v = <$fty as $crate::binding::contract::FromJs>::from_args(a, i);
                            i += 1;
                            v.map_err(|m| m.message(&$crate::binding::contract::camel(
                                    stringify!($field))))?
                        },)*
                        _call: ::std::marker::PhantomData,
                    })
                }
            }
        )*

        /// Every function JS can call, in declaration order.
        pub const EXPORTS: &[$crate::binding::contract::Export] = &[$(
            $(#[cfg($cfg)])?
            $crate::binding::contract::Export {
                name: stringify!($name),
                args: $args::ARGS,
                ret: $ret,
                f: |a| match $args::read(&a) {
                    Ok(args) => $code(args),
                    Err(msg) => $crate::binding::contract::refuse(a.env, stringify!($name), &msg),
                },
                counted: exports!(@counted $($uncounted)?),
            },
        )*];
    };
    (@counted) => { true };
    (@counted uncounted) => { false };
}
pub(crate) use exports;

/// Declares an object argument: `struct Name { field: Type, ... }` (an `Option` field may be
/// absent, undefined or null). Reading it refuses a field it does not declare.
macro_rules! js_object {
    ($(#[doc = $doc:literal])* pub struct $name:ident { $($field:ident : $fty:ty),* $(,)? }) => {
        $(#[doc = $doc])*
        #[derive(Clone, Debug, Default)]
        pub struct $name {
            $(pub $field: $fty,)*
        }

        impl $name {
            pub const FIELDS: &'static [$crate::binding::contract::Field] = &[
                $($crate::binding::contract::from_js::<$fty>(stringify!($field)),)*
            ];
        }

        impl $crate::binding::contract::FromJs for $name {
            fn ts() -> String {
                stringify!($name).into()
            }

            fn from_js(
                env: $crate::binding::napi::Env,
                v: Option<$crate::binding::napi::Value>,
            ) -> Result<Self, $crate::binding::contract::Misfit> {
                use $crate::binding::contract::{camel, values, FromJs, Misfit};
                let obj = values::JsObject::from_js(env, v)
                    .map_err(|_| Misfit::wrong::<$name>(env, v))?.0;
                for key in values::own_keys(env, obj) {
                    if !Self::FIELDS.iter().any(|f| camel(f.name) == key) {
                        return Err(Misfit {
                            path: format!(".{key}"),
                            what: values::Why::Unknown { of: stringify!($name) },
                        });
                    }
                }
                Ok($name {
                    $($field: {
                        let key = camel(stringify!($field));
                        let v = $crate::binding::napi::get_named(env, obj, &key);
                        <$fty as FromJs>::from_js(env, Some(v))
                            .map_err(|m| m.within(&format!(".{key}")))?
                    },)*
                })
            }
        }
    };
}
pub(crate) use js_object;

/// Declares an object the addon hands to JS: `pub struct Name<'a> { field: Type, ... }`,
/// built with its fields named as declared (camelCase) and typed as `Name`.
macro_rules! js_record {
    ($(#[doc = $doc:literal])* pub struct $name:ident<'a> { $($field:ident : $fty:ty),* $(,)? }) => {
        $(#[doc = $doc])*
        pub struct $name<'a> {
            $(pub $field: $fty,)*
        }

        impl<'a> $name<'a> {
            pub const FIELDS: &'static [$crate::binding::contract::Field] = &[
                $($crate::binding::contract::to_js::<$fty>(stringify!($field)),)*
            ];

            /// Its TypeScript type, from the fields.
            pub fn declared() -> String {
                $crate::binding::contract::record_ts(Self::FIELDS)
            }
        }

        impl $crate::binding::contract::ToJs for $name<'_> {
            fn ts() -> String {
                stringify!($name).into()
            }

            fn to_js(&self, env: $crate::binding::napi::Env) -> $crate::binding::napi::Value {
                let o = $crate::binding::napi::object(env);
                $($crate::binding::napi::set_named(
                    env,
                    o,
                    &$crate::binding::contract::camel(stringify!($field)),
                    $crate::binding::contract::ToJs::to_js(&self.$field, env),
                );)*
                o
            }
        }
    };
}
pub(crate) use js_record;

/// `{ a: T; b?: U }` for declared fields.
pub fn record_ts(fields: &[Field]) -> String {
    let parts: Vec<String> = fields
        .iter()
        .map(|f| {
            format!(
                "{}{}: {}",
                camel(f.name),
                if f.optional { "?" } else { "" },
                (f.ts)()
            )
        })
        .collect();
    format!("{{ {} }}", parts.join("; "))
}

/// How many fields a declaration has (an array length in a macro).
macro_rules! count {
    () => { 0usize };
    ($head:ident $($rest:ident)*) => { 1usize + $crate::binding::contract::count!($($rest)*) };
}
pub(crate) use count;

/// Declares the callbacks JS registers with `init`, each
/// `event Name => on_name { field: Type, ... } -> ();` (handed over in batches: `Encode`) or
/// `direct Name => on_name { ... } -> Return;` (called on its own: `Invoke`). Makes `Cb`
/// (their order), a struct per callback, and `CALLBACKS`.
macro_rules! callbacks {
    ($(
        $(#[doc = $doc:literal])*
        $how:ident $cb:ident $(<$lt:lifetime>)? => $name:ident { $($field:ident : $fty:ty),* $(,)? }
            -> $ret:ty;
    )*) => {
        /// The callbacks, in `CALLBACKS`'s order.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum Cb { $($cb,)* }

        /// Each callback's arguments, by name.
        pub mod cb {
            #[allow(unused_imports)]
            use super::*;
            $(
                $(#[doc = $doc])*
                pub struct $cb $(<$lt>)? {
                    $(pub $field: $fty,)*
                }

                impl $(<$lt>)? $cb $(<$lt>)? {
                    pub const ARGS: &'static [$crate::binding::contract::Field] = &[
                        $($crate::binding::contract::to_js::<$fty>(stringify!($field)),)*
                    ];
                }

                $crate::binding::contract::callbacks!(@$how $cb $(<$lt>)? { $($field : $fty),* });
            )*
        }

        /// Every callback, in `Cb`'s order.
        pub const CALLBACKS: &[$crate::binding::contract::Callback] = &[$(
            $crate::binding::contract::Callback {
                name: stringify!($name),
                args: cb::$cb::ARGS,
                ret: <$ret as $crate::binding::contract::Returns>::ts,
                event: $crate::binding::contract::callbacks!(@is_event $how),
            },
        )*];
    };
    (@is_event event) => { true };
    (@is_event direct) => { false };
    (@event $cb:ident $(<$lt:lifetime>)? { $($field:ident : $fty:ty),* }) => {
        impl $(<$lt>)? $crate::binding::contract::Encode for $cb $(<$lt>)? {
            const INDEX: usize = super::Cb::$cb as usize;

            #[allow(unused_variables)]
            fn encode(
                &self,
                env: $crate::binding::napi::Env,
                nums: &mut $crate::binding::contract::values::Numbers<'_>,
                vals: &mut Vec<$crate::binding::napi::Value>,
            ) {
                // The kind and the fields fit the room the deliverer keeps for one event.
                const _: () = assert!(
                    $crate::binding::contract::count!($($field)*)
                        < $crate::binding::contract::values::MAX_EVENT_NUMBERS
                );
                nums.push(Self::INDEX as f64);
                $($crate::binding::contract::ToJs::add_to(&self.$field, env, nums, vals);)*
            }
        }
    };
    (@direct $cb:ident $(<$lt:lifetime>)? { $($field:ident : $fty:ty),* }) => {
        impl $(<$lt>)? $crate::binding::contract::Invoke for $cb $(<$lt>)? {
            const INDEX: usize = super::Cb::$cb as usize;
            type Values =
                [$crate::binding::napi::Value; $crate::binding::contract::count!($($field)*)];

            #[allow(unused_variables)]
            fn values(&self, env: $crate::binding::napi::Env) -> Self::Values {
                [$($crate::binding::contract::ToJs::to_js(&self.$field, env)),*]
            }
        }
    };
}
pub(crate) use callbacks;

/// A directly called callback's arguments, as the call passes them.
pub trait Invoke {
    /// The callback's place in `CALLBACKS`.
    const INDEX: usize;
    type Values: AsRef<[Value]>;
    fn values(&self, env: Env) -> Self::Values;
}

/// An event's fields as a batch carries them: its kind (its place in `CALLBACKS`) and its
/// numeric fields in `nums`, its other fields as JS values in `vals`, in declaration order
/// (lib/internal/events.js reads them back the same way).
pub trait Encode {
    const INDEX: usize;
    fn encode(&self, env: Env, nums: &mut values::Numbers<'_>, vals: &mut Vec<Value>);
}

/// What a callback returns, as TypeScript.
pub trait Returns {
    fn ts() -> String;
}

impl Returns for () {
    fn ts() -> String {
        "void".into()
    }
}

/// Declares named constants JS reads from `binding.constants`: `NAME = value;`.
macro_rules! constants {
    ($($(#[doc = $doc:literal])* $name:ident = $value:expr;)*) => {
        $($(#[doc = $doc])* pub const $name: i32 = $value;)*

        /// (name, value) of every constant.
        pub const CONSTANTS: &[(&str, i32)] = &[$((stringify!($name), $name),)*];
    };
}
pub(crate) use constants;

fn fields_value(env: Env, fields: &[Field]) -> Value {
    let rows: Vec<Value> = fields
        .iter()
        .map(|f| {
            napi::array(
                env,
                &[
                    napi::utf8(env, &camel(f.name)),
                    napi::utf8(env, &(f.ts)()),
                    napi::boolean(env, f.optional),
                    napi::boolean(env, f.numeric),
                ],
            )
        })
        .collect();
    napi::array(env, &rows)
}

fn row(env: Env, name: &str, fields: &[Field], ret: &str) -> Value {
    napi::array(
        env,
        &[
            napi::utf8(env, &camel(name)),
            fields_value(env, fields),
            napi::utf8(env, ret),
        ],
    )
}

/// The declarations as JS data: `{ exports, callbacks, objects, types, constants }`; each
/// row `[name, [[field, type, optional, numeric], ...], type]` (a callback's row has a
/// fourth element: whether it is an event).
pub fn object(
    env: Env,
    exports: &[Export],
    callbacks: &[Callback],
    objects: &[(&str, &[Field])],
    types: &[NamedType],
    constants: &[(&str, i32)],
) -> Value {
    let obj = napi::object(env);
    let rows: Vec<Value> = exports
        .iter()
        .map(|e| row(env, e.name, e.args, e.ret))
        .collect();
    napi::set_named(env, obj, "exports", napi::array(env, &rows));
    let rows: Vec<Value> = callbacks
        .iter()
        .map(|c| {
            let r = row(env, c.name, c.args, &(c.ret)());
            // SAFETY: `r` is the array `row` just made; index 3 extends it.
            unsafe { ::napi::sys::napi_set_element(env, r, 3, napi::boolean(env, c.event)) };
            r
        })
        .collect();
    napi::set_named(env, obj, "callbacks", napi::array(env, &rows));
    let rows: Vec<Value> = objects
        .iter()
        .map(|(name, fields)| napi::array(env, &[napi::utf8(env, name), fields_value(env, fields)]))
        .collect();
    napi::set_named(env, obj, "objects", napi::array(env, &rows));
    let rows: Vec<Value> = types
        .iter()
        .map(|t| napi::array(env, &[napi::utf8(env, t.name), napi::utf8(env, &(t.ts)())]))
        .collect();
    napi::set_named(env, obj, "types", napi::array(env, &rows));
    let c = napi::object(env);
    for (name, v) in constants {
        napi::set_named(env, c, name, napi::i32v(env, *v));
    }
    napi::set_named(env, obj, "constants", c);
    obj
}

#[cfg(test)]
mod tests {
    use super::camel;

    #[test]
    fn camel_case_names() {
        assert_eq!(camel("respond"), "respond");
        assert_eq!(camel("header_lines"), "headerLines");
        assert_eq!(camel("tls_sni_answer"), "tlsSniAnswer");
        assert_eq!(camel("on_close_phase"), "onClosePhase");
    }
}
