//! Merging a patch map into the original map and its lists
//! (`mergeMap`, `mergePatchIntoOriginal`, `mergeSlice*`).

use super::*;

impl<'a> SchemaContext<'a> {
    /// `mergeMap` with `MergeParallelList` and `IgnoreUnmatchedNulls` set.
    pub(super) fn merge_map(
        &self,
        mut original: Map<String, Value>,
        mut patch: Map<String, Value>,
        t: GoType<'a>,
        depth: usize,
    ) -> Result<Map<String, Value>> {
        if depth > MAX_DEPTH {
            return Err(StrategicPatchError::TooDeep);
        }
        if let Some(directive) = patch.get(DIRECTIVE_MARKER) {
            return match directive.as_str() {
                Some(REPLACE_DIRECTIVE) => {
                    patch.remove(DIRECTIVE_MARKER);
                    Ok(patch)
                }
                Some(DELETE_DIRECTIVE) => Ok(Map::new()),
                _ => Err(bad_patch_type(directive, &patch)),
            };
        }
        apply_retain_keys(&mut original, &mut patch)?;
        self.merge_patch_into_original(&mut original, &mut patch, t, depth)?;

        for (key, patch_value) in patch {
            let (is_delete_list, key) = if key.starts_with(DELETE_FROM_PRIMITIVE_LIST_PREFIX) {
                let list_key = extract_key(&key, DELETE_FROM_PRIMITIVE_LIST_PREFIX)?;
                if list_key.is_empty() {
                    (true, key)
                } else {
                    (true, list_key.to_string())
                }
            } else {
                (false, key)
            };
            if patch_value.is_null() {
                original.remove(&key);
                continue;
            }
            let same_type = original
                .get(&key)
                .map(|value| tag(value) == tag(&patch_value));
            if same_type != Some(true) {
                // Absent from the original, or of another type: take the patch value.
                if !is_delete_list {
                    let mut value = patch_value;
                    discard_null_values(&mut value);
                    match remove_directives(value) {
                        Some(value) => original.insert(key, value),
                        None => original.remove(&key),
                    };
                }
                continue;
            }
            let Some(original_value) = original.remove(&key) else {
                continue;
            };
            let merged = match (original_value, patch_value) {
                (Value::Object(original_map), Value::Object(patch_map)) => {
                    let (subschema, meta) = self.lookup_struct(t, &key)?;
                    if meta.strategy()? == REPLACE_DIRECTIVE {
                        Value::Object(patch_map)
                    } else {
                        Value::Object(self.merge_map(
                            original_map,
                            patch_map,
                            subschema,
                            depth + 1,
                        )?)
                    }
                }
                (Value::Array(original_list), Value::Array(patch_list)) => {
                    let (subschema, meta) = self.lookup_slice(t, &key)?;
                    let strategy = meta.strategy()?;
                    Value::Array(self.merge_slice_handler(
                        original_list,
                        patch_list,
                        subschema,
                        strategy,
                        meta.merge_key,
                        is_delete_list,
                        depth,
                        None,
                    )?)
                }
                // Scalars: `removeDirectives` keeps them as they are.
                (_, patch_value) => patch_value,
            };
            original.insert(key, merged);
        }
        Ok(original)
    }

    /// `mergePatchIntoOriginal`: every `$setElementOrder/<list>` with its list.
    pub(super) fn merge_patch_into_original(
        &self,
        original: &mut Map<String, Value>,
        patch: &mut Map<String, Value>,
        t: GoType<'a>,
        depth: usize,
    ) -> Result<()> {
        let keys: Vec<String> = patch
            .keys()
            .filter(|key| key.starts_with(SET_ELEMENT_ORDER_PREFIX))
            .cloned()
            .collect();
        for key in keys {
            let Some(order_value) = patch.remove(&key) else {
                continue;
            };
            let Value::Array(set_order) = order_value else {
                return Err(bad_arg_type(GO_SLICE_TYPE, Some(&order_value)));
            };
            let list_key = extract_key(&key, SET_ELEMENT_ORDER_PREFIX)?.to_string();
            let original_list = match original.get(&list_key) {
                None => None,
                Some(Value::Array(list)) => Some(list.clone()),
                Some(other) => return Err(bad_arg_type(GO_SLICE_TYPE, Some(other))),
            };
            let patch_list = match patch.get(&list_key) {
                None => None,
                Some(Value::Array(list)) => Some(list.clone()),
                Some(other) => return Err(bad_arg_type(GO_SLICE_TYPE, Some(other))),
            };
            let (subschema, meta) = self.lookup_slice(t, &list_key)?;
            let strategy = meta.strategy()?;
            let merge_key = meta.merge_key;
            validate_patch_with_set_order_list(
                patch_list.as_deref().unwrap_or(&[]),
                &set_order,
                merge_key,
            )?;

            // Upstream keeps reading `originalFieldValue` after merging: a Go slice
            // sharing its array with the merged list, so deletions (shifting elements
            // left) and later appends show through it. `view` is that window.
            let mut view = original_list.clone().unwrap_or_default();
            let merged = match (&original_list, &patch_list) {
                (Some(original_list), None) => original_list.clone(),
                (None, Some(patch_list)) => remove_directives_from_list(patch_list.clone()),
                (Some(original_list), Some(patch_list)) => self.merge_slice_handler(
                    original_list.clone(),
                    patch_list.clone(),
                    subschema,
                    strategy,
                    merge_key,
                    false,
                    depth,
                    Some(&mut view),
                )?,
                (None, None) => continue,
            };
            let (patch_items, server_only) = if merge_key.is_empty() {
                partition_primitives(merged, &set_order)?
            } else {
                partition_maps(merged, &set_order, merge_key)?
            };
            let kind = slice_element_type(&[&view, patch_list.as_deref().unwrap_or(&[])])?;
            let ordered = normalize_element_order(
                patch_items,
                server_only,
                &set_order,
                &view,
                merge_key,
                kind == Tag::Map,
            )?;
            original.insert(list_key.clone(), Value::Array(ordered));
            patch.remove(&list_key);
        }
        Ok(())
    }

    /// `mergeSliceHandler`: merge lists (and deletion lists) merge, others are replaced.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn merge_slice_handler(
        &self,
        original: Vec<Value>,
        patch: Vec<Value>,
        element: GoType<'a>,
        strategy: &str,
        merge_key: &str,
        is_delete_list: bool,
        depth: usize,
        view: Option<&mut Vec<Value>>,
    ) -> Result<Vec<Value>> {
        if strategy == MERGE_DIRECTIVE || is_delete_list {
            self.merge_slice(
                original,
                patch,
                element,
                merge_key,
                is_delete_list,
                depth,
                view,
            )
        } else {
            Ok(patch)
        }
    }

    /// `mergeSlice`. `view`, when given, tracks what the caller's slice of the
    /// original list shows afterwards (see [`AliasView`]).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn merge_slice(
        &self,
        original: Vec<Value>,
        patch: Vec<Value>,
        element: GoType<'a>,
        merge_key: &str,
        is_delete_list: bool,
        depth: usize,
        view: Option<&mut Vec<Value>>,
    ) -> Result<Vec<Value>> {
        let mut view = view.map(AliasView::new);
        if original.is_empty() && patch.is_empty() {
            return Ok(original);
        }
        let kind = slice_element_type(&[&original, &patch])?;
        let (merged, patch, server_order) = if kind != Tag::Map {
            if is_delete_list {
                return delete_from_slice(original, &patch);
            }
            let mut both = original.clone();
            both.extend(patch.iter().cloned());
            (deduplicate_scalars(both)?, patch, original)
        } else {
            if merge_key.is_empty() {
                return Err(StrategicPatchError::NoMergeKeyForList(element.kind()));
            }
            let (original, patch, replaced) =
                merge_slice_with_special_elements(original, patch, merge_key, view.as_mut())?;
            let server_order = original.clone();
            // After `$patch: replace` the list is the patch's own array.
            let view = if replaced { None } else { view.as_mut() };
            let merged = self.merge_slice_without_special_elements(
                original, &patch, merge_key, element, depth, view,
            )?;
            (merged, patch, server_order)
        };
        let (patch_items, server_only) = if merge_key.is_empty() {
            partition_primitives(merged, &patch)?
        } else {
            partition_maps(merged, &patch, merge_key)?
        };
        normalize_element_order(
            patch_items,
            server_only,
            &patch,
            &server_order,
            merge_key,
            kind == Tag::Map,
        )
    }

    /// `mergeSliceWithoutSpecialElements`: merge each patch element into the
    /// original element with its merge key, or append it.
    pub(super) fn merge_slice_without_special_elements(
        &self,
        mut original: Vec<Value>,
        patch: &[Value],
        merge_key: &str,
        element: GoType<'a>,
        depth: usize,
        mut view: Option<&mut AliasView<'_>>,
    ) -> Result<Vec<Value>> {
        for item in patch {
            let Some(patch_map) = item.as_object() else {
                continue;
            };
            let Some(merge_value) = patch_map.get(merge_key) else {
                return Err(no_merge_key(item, merge_key));
            };
            match find_map_in_slice(&original, merge_key, merge_value)? {
                Some(index) => {
                    let original_map = match std::mem::take(&mut original[index]) {
                        Value::Object(map) => map,
                        _ => Map::new(),
                    };
                    let merged = Value::Object(self.merge_map(
                        original_map,
                        patch_map.clone(),
                        element,
                        depth + 1,
                    )?);
                    if let Some(view) = view.as_mut() {
                        view.set(index, &merged);
                    }
                    original[index] = merged;
                }
                None => {
                    if let Some(view) = view.as_mut() {
                        view.set(original.len(), item);
                    }
                    original.push(item.clone());
                }
            }
        }
        Ok(original)
    }
}
