//! The attribute macros of `interleave`, re-exported by it: use them as
//! `#[interleave::unit_of_work]`.

use proc_macro::TokenStream;
use quote::quote;
use syn::{parse_macro_input, FnArg, ItemFn, LitStr};

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
