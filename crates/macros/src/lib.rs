//! The attribute macros of `interleave`, re-exported by it: use them as
//! `#[interleave::unit_of_work]` and `#[interleave::test]`.

use proc_macro::TokenStream;
use quote::{quote, ToTokens};
use syn::ext::IdentExt;
use syn::punctuated::Punctuated;
use syn::{
    parse_macro_input, Expr, ExprLit, FnArg, Ident, ItemFn, Lit, LitBool, LitInt, LitStr, Meta,
    MetaNameValue, ReturnType, Token,
};

/// Makes a function a unit of work (see `interleave::atomic_set`).
///
/// The unit is named after the function, or `#[unit_of_work("name")]`. On a method taking
/// `&self` or `&mut self` it is declared on the receiver's atomic set: the tracked objects
/// stored in `*self`. Nested units belong to the outermost one. Async functions are not
/// supported.
#[proc_macro_attribute]
pub fn unit_of_work(attribute: TokenStream, item: TokenStream) -> TokenStream {
    let function = parse_macro_input!(item as ItemFn);
    let name = if attribute.is_empty() {
        function.sig.ident.to_string()
    } else {
        parse_macro_input!(attribute as LitStr).value()
    };
    if let Some(asyncness) = function.sig.asyncness {
        return syn::Error::new_spanned(asyncness, "#[unit_of_work] does not support async fn")
            .to_compile_error()
            .into();
    }
    let borrowed_receiver =
        function.sig.inputs.iter().any(
            |input| matches!(input, FnArg::Receiver(receiver) if receiver.reference.is_some()),
        );
    let owner = if borrowed_receiver {
        quote!(::core::option::Option::Some(
            ::interleave::atomic_set::Owner::of(&*self)
        ))
    } else {
        quote!(::core::option::Option::None)
    };
    let ItemFn {
        attrs,
        vis,
        sig,
        block,
    } = function;
    quote! {
        #(#attrs)*
        #[track_caller]
        #vis #sig {
            let __interleave_owner = #owner;
            ::interleave::atomic_set::unit_of_work_in(#name, __interleave_owner, move || #block)
        }
    }
    .into()
}

/// The settings `#[interleave::test(...)]` accepts, in the order they are documented.
const TEST_SETTINGS: &str = "strategy, executions, seed, max_steps, workers, persist";

/// The expansion: `#[interleave::test(strategy = "pct:d=3", executions = 5000, seed = 7)]`
/// makes the function a `#[test]` that runs `interleave::Builder::new()` with those settings,
/// the regression file `Persistence::in_crate(env!("CARGO_MANIFEST_DIR"), "<module
/// path>::<name>")` and `.check(|| body)`.
#[proc_macro_attribute]
pub fn test(attribute: TokenStream, item: TokenStream) -> TokenStream {
    let settings =
        parse_macro_input!(attribute with Punctuated::<Meta, Token![,]>::parse_terminated);
    let function = parse_macro_input!(item as ItemFn);
    TestSettings::parse(settings)
        .and_then(|settings| expand_test(&settings, function))
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

/// What `#[interleave::test(...)]` was given, checked.
#[derive(Default)]
struct TestSettings {
    strategy: Option<LitStr>,
    executions: Option<LitInt>,
    seed: Option<LitInt>,
    max_steps: Option<LitInt>,
    workers: Option<LitInt>,
    persist: Option<LitBool>,
}

impl TestSettings {
    fn parse(settings: Punctuated<Meta, Token![,]>) -> syn::Result<TestSettings> {
        let mut parsed = TestSettings::default();
        for setting in settings {
            let Meta::NameValue(MetaNameValue { path, value, .. }) = setting else {
                return Err(syn::Error::new_spanned(
                    &setting,
                    format!(
                        "#[interleave::test] takes settings as `name = value`, such as \
                         `executions = 5000`; the names are {TEST_SETTINGS}"
                    ),
                ));
            };
            let key = path.get_ident().map(Ident::to_string).unwrap_or_default();
            let expected = match key.as_str() {
                "strategy" => "a string literal, a strategy spec such as \"pct:d=3\"",
                "executions" | "seed" | "max_steps" | "workers" => "an integer literal",
                "persist" => "`true` or `false`",
                _ => {
                    return Err(syn::Error::new_spanned(
                        &path,
                        format!(
                            "unknown setting `{}`; #[interleave::test] takes {TEST_SETTINGS}",
                            path.to_token_stream()
                        ),
                    ))
                }
            };
            let mismatch = |tokens: &dyn ToTokens| {
                syn::Error::new_spanned(
                    tokens,
                    format!(
                        "`{key}` takes {expected}; for a computed setting, call \
                         interleave::Builder in a plain #[test]"
                    ),
                )
            };
            let literal = match &value {
                Expr::Lit(ExprLit { lit, .. }) => lit.clone(),
                other => return Err(mismatch(other)),
            };
            let duplicate = || syn::Error::new_spanned(&path, format!("`{key}` is given twice"));
            match (key.as_str(), literal) {
                ("strategy", Lit::Str(spec)) => {
                    if parsed.strategy.replace(spec).is_some() {
                        return Err(duplicate());
                    }
                }
                ("persist", Lit::Bool(flag)) => {
                    if parsed.persist.replace(flag).is_some() {
                        return Err(duplicate());
                    }
                }
                ("executions" | "seed" | "max_steps" | "workers", Lit::Int(number)) => {
                    let number = checked_integer(&key, number)?;
                    let slot = match key.as_str() {
                        "executions" => &mut parsed.executions,
                        "seed" => &mut parsed.seed,
                        "max_steps" => &mut parsed.max_steps,
                        _ => &mut parsed.workers,
                    };
                    if slot.replace(number).is_some() {
                        return Err(duplicate());
                    }
                }
                (_, literal) => return Err(mismatch(&literal)),
            }
        }
        Ok(parsed)
    }
}

/// `number` as an unsuffixed literal, once it is known to fit the setting's type (`usize` for
/// `workers`, `u64` otherwise) and to be at least 1 (except a seed).
fn checked_integer(key: &str, number: LitInt) -> syn::Result<LitInt> {
    let fits = match key {
        "workers" => number.base10_parse::<usize>().map(|value| value as u64),
        _ => number.base10_parse::<u64>(),
    };
    let value = fits.map_err(|error| {
        syn::Error::new_spanned(&number, format!("`{key}` does not fit: {error}"))
    })?;
    if value == 0 && key != "seed" {
        return Err(syn::Error::new_spanned(
            number,
            format!("`{key}` must be at least 1"),
        ));
    }
    Ok(LitInt::new(&value.to_string(), number.span()))
}

fn expand_test(settings: &TestSettings, function: ItemFn) -> syn::Result<proc_macro2::TokenStream> {
    let ItemFn {
        attrs,
        vis,
        sig,
        block,
    } = function;
    let refuse = |tokens: &dyn ToTokens, message: &str| {
        Err(syn::Error::new_spanned(tokens, message.to_string()))
    };
    if let Some(asyncness) = &sig.asyncness {
        return refuse(
            asyncness,
            "#[interleave::test] does not support async fn; write the test as a plain fn",
        );
    }
    if let Some(constness) = &sig.constness {
        return refuse(constness, "an #[interleave::test] function cannot be const");
    }
    if let Some(unsafety) = &sig.unsafety {
        return refuse(unsafety, "an #[interleave::test] function cannot be unsafe");
    }
    if let Some(abi) = &sig.abi {
        return refuse(abi, "an #[interleave::test] function cannot have an ABI");
    }
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        return refuse(
            &sig.generics,
            "an #[interleave::test] function cannot be generic",
        );
    }
    if !sig.inputs.is_empty() {
        return refuse(
            &sig.inputs,
            "an #[interleave::test] function takes no arguments",
        );
    }
    if let Some(test) = attrs.iter().find(|attr| attr.path().is_ident("test")) {
        return refuse(
            test,
            "#[interleave::test] already makes the function a #[test]; remove this attribute",
        );
    }
    let name = &sig.ident;
    let test_name = name.unraw().to_string();
    let mut calls = Vec::new();
    if let Some(spec) = &settings.strategy {
        calls.push(quote! {
            .strategy(match <::interleave::StrategySpec as ::core::str::FromStr>::from_str(#spec) {
                ::core::result::Result::Ok(spec) => spec,
                ::core::result::Result::Err(error) => ::core::panic!(
                    "#[interleave::test(strategy = {:?})]: {}", #spec, error
                ),
            })
        });
    }
    for (method, value) in [
        ("executions", &settings.executions),
        ("seed", &settings.seed),
        ("max_steps", &settings.max_steps),
        ("workers", &settings.workers),
    ] {
        if let Some(value) = value {
            let method = Ident::new(method, value.span());
            calls.push(quote!(.#method(#value)));
        }
    }
    // A #[should_panic] test expects its failure: saving it as a regression would only leave
    // a file behind in the test crate on every machine that runs it.
    let expects_failure = attrs
        .iter()
        .any(|attr| attr.path().is_ident("should_panic"));
    let persist = settings
        .persist
        .as_ref()
        .map_or(!expects_failure, LitBool::value);
    if persist {
        calls.push(quote! {
            .persist_failures(::interleave::Persistence::in_crate(
                ::core::env!("CARGO_MANIFEST_DIR"),
                ::core::concat!(::core::module_path!(), "::", #test_name),
            ))
        });
    }
    let run = match &sig.output {
        ReturnType::Default => quote!(.check(|| #block);),
        ReturnType::Type(_, output) => quote! {
            .check(|| ::interleave::__private::TestOutcome::assert_passed(__interleave_test_body()));
            fn __interleave_test_body() -> #output #block
        },
    };
    // The test attribute goes last, so that attribute macros written after this one see it;
    // its absolute path keeps `use interleave::test` from turning it into this macro again.
    Ok(quote! {
        #(#attrs)*
        #[::core::prelude::v1::test]
        #vis fn #name() {
            ::interleave::Builder::new()
                #(#calls)*
                #run
        }
    })
}
