//! List directives and list merging: `$retainKeys`,
//! `$setElementOrder`, `$deleteFromPrimitiveList`, merge keys, ordering.

use super::*;

/// `applyRetainKeysDirective`: clear the original's keys missing from `$retainKeys`.
pub(super) fn apply_retain_keys(
    original: &mut Map<String, Value>,
    patch: &mut Map<String, Value>,
) -> Result<()> {
    let Some(retain_keys) = patch.remove(RETAIN_KEYS_DIRECTIVE) else {
        return Ok(());
    };
    let Value::Array(retain_keys) = retain_keys else {
        return Err(StrategicPatchError::BadPatchFormatForRetainKeys);
    };
    for key in &retain_keys {
        check_hashable(key)?;
    }
    let retained = |key: &str| retain_keys.iter().any(|value| value.as_str() == Some(key));
    for (key, value) in patch.iter() {
        if value.is_null()
            || key.starts_with(DELETE_FROM_PRIMITIVE_LIST_PREFIX)
            || key.starts_with(SET_ELEMENT_ORDER_PREFIX)
        {
            continue;
        }
        if !retained(key) {
            return Err(StrategicPatchError::BadPatchFormatForRetainKeys);
        }
    }
    original.retain(|key, _| retained(key));
    Ok(())
}

/// `extractKey`: the list name after `<prefix>/`.
pub(super) fn extract_key<'k>(key: &'k str, prefix: &str) -> Result<&'k str> {
    match key.split_once('/') {
        Some((head, rest)) if head == prefix => Ok(rest),
        _ if prefix == DELETE_FROM_PRIMITIVE_LIST_PREFIX => {
            Err(StrategicPatchError::BadPatchFormatForPrimitiveList)
        }
        _ => Err(StrategicPatchError::BadPatchFormatForSetElementOrderList),
    }
}

/// `validatePatchWithSetOrderList`: the patch list is in `$setElementOrder` order.
pub(super) fn validate_patch_with_set_order_list(
    patch_list: &[Value],
    set_order: &[Value],
    merge_key: &str,
) -> Result<()> {
    if set_order.is_empty() || patch_list.is_empty() {
        return Ok(());
    }
    let non_delete = if merge_key.is_empty() {
        patch_list.to_vec()
    } else {
        extract_to_delete_items(patch_list.to_vec())?.0
    };
    let (mut patch_index, mut order_index) = (0, 0);
    while patch_index < non_delete.len() && order_index < set_order.len() {
        if non_delete[patch_index]
            .as_object()
            .is_some_and(|map| map.contains_key(DIRECTIVE_MARKER))
        {
            patch_index += 1;
            continue;
        }
        if merge_key_value_equal(&non_delete[patch_index], &set_order[order_index], merge_key)? {
            patch_index += 1;
        }
        order_index += 1;
    }
    if patch_index < non_delete.len() && order_index >= set_order.len() {
        return Err(StrategicPatchError::OrderMismatch {
            patch: go::fmt::list_v(patch_list),
            order: go::fmt::list_v(set_order),
        });
    }
    Ok(())
}

/// `mergeKeyValueEqual`.
pub(super) fn merge_key_value_equal(left: &Value, right: &Value, merge_key: &str) -> Result<bool> {
    if merge_key.is_empty() {
        return go_equal(Some(left), Some(right));
    }
    let Some(left_map) = left.as_object() else {
        return Err(bad_arg_type(GO_MAP_TYPE, Some(left)));
    };
    let Some(right_map) = right.as_object() else {
        return Err(bad_arg_type(GO_MAP_TYPE, Some(right)));
    };
    let Some(left_value) = left_map.get(merge_key) else {
        return Err(no_merge_key(left, merge_key));
    };
    let Some(right_value) = right_map.get(merge_key) else {
        return Err(no_merge_key(right, merge_key));
    };
    go_equal(Some(left_value), Some(right_value))
}

/// `mergeSliceWithSpecialElements`: apply `$patch: delete` elements to the
/// original, honour `$patch: replace`; returns (original, patch without
/// directives, whether the list was replaced).
pub(super) fn merge_slice_with_special_elements(
    mut original: Vec<Value>,
    patch: Vec<Value>,
    merge_key: &str,
    mut view: Option<&mut AliasView<'_>>,
) -> Result<(Vec<Value>, Vec<Value>, bool)> {
    let mut plain = Vec::new();
    let mut replace = false;
    for item in patch {
        let Some(directive) = item.as_object().and_then(|map| map.get(DIRECTIVE_MARKER)) else {
            plain.push(item);
            continue;
        };
        match directive.as_str() {
            Some(DELETE_DIRECTIVE) => {
                let Some(merge_value) = item.get(merge_key) else {
                    return Err(no_merge_key(&item, merge_key));
                };
                while let Some(index) = find_map_in_slice(&original, merge_key, merge_value)? {
                    original.remove(index);
                    // `append(original[:i], original[i+1:]...)` shifts in place.
                    if let Some(view) = view.as_mut() {
                        for (position, value) in original.iter().enumerate().skip(index) {
                            view.set(position, value);
                        }
                    }
                }
            }
            Some(REPLACE_DIRECTIVE) => replace = true,
            Some(MERGE_DIRECTIVE) => return Err(StrategicPatchError::MergeListDirective),
            _ => {
                return Err(bad_patch_type(
                    directive,
                    item.as_object().unwrap_or(&Map::new()),
                ))
            }
        }
    }
    if replace {
        Ok((plain, Vec::new(), true))
    } else {
        Ok((original, plain, false))
    }
}

/// The caller's view of an original list that upstream merges in place: a Go
/// slice of fixed length over the array the merge shifts deleted elements
/// out of and appends new elements into (while they fit its length; beyond
/// it they are invisible, whatever the array's capacity).
pub(super) struct AliasView<'v> {
    window: &'v mut Vec<Value>,
}

impl<'v> AliasView<'v> {
    pub(super) fn new(window: &'v mut Vec<Value>) -> Self {
        AliasView { window }
    }

    pub(super) fn set(&mut self, index: usize, value: &Value) {
        if let Some(slot) = self.window.get_mut(index) {
            *slot = value.clone();
        }
    }
}

/// `findMapInSliceBasedOnKeyValue`: the first element whose merge key has `value`.
pub(super) fn find_map_in_slice(
    list: &[Value],
    merge_key: &str,
    value: &Value,
) -> Result<Option<usize>> {
    for (index, item) in list.iter().enumerate() {
        let Some(map) = item.as_object() else {
            return Err(StrategicPatchError::NotAMap(index));
        };
        if let Some(candidate) = map.get(merge_key) {
            if go_equal(Some(candidate), Some(value))? {
                return Ok(Some(index));
            }
        }
    }
    Ok(None)
}

/// `deleteFromSlice`: drop every element listed in a `$deleteFromPrimitiveList`.
pub(super) fn delete_from_slice(current: Vec<Value>, to_delete: &[Value]) -> Result<Vec<Value>> {
    for value in to_delete {
        check_hashable(value)?;
    }
    let mut kept = Vec::with_capacity(current.len());
    for value in current {
        check_hashable(&value)?;
        let mut listed = false;
        for candidate in to_delete {
            if go_equal(Some(candidate), Some(&value))? {
                listed = true;
                break;
            }
        }
        if !listed {
            kept.push(value);
        }
    }
    Ok(kept)
}

/// `deduplicateScalars`, the same swap-with-last algorithm (its order shows
/// nowhere once the list is normalized, but it costs nothing to keep).
pub(super) fn deduplicate_scalars(mut list: Vec<Value>) -> Result<Vec<Value>> {
    let mut length = list.len() as isize - 1;
    let mut i: isize = 0;
    while i < length {
        let mut j = i + 1;
        while j <= length {
            if go_equal(Some(&list[i as usize]), Some(&list[j as usize]))? {
                list[j as usize] = list[length as usize].clone();
                list.truncate(length as usize);
                length -= 1;
                j -= 1;
            }
            j += 1;
        }
        i += 1;
    }
    Ok(list)
}

/// `partitionPrimitivesByPresentInList`: (present in `partition_by`, the rest).
pub(super) fn partition_primitives(
    list: Vec<Value>,
    partition_by: &[Value],
) -> Result<(Vec<Value>, Vec<Value>)> {
    for value in partition_by {
        check_hashable(value)?;
    }
    let (mut present, mut rest) = (Vec::new(), Vec::new());
    for value in list {
        check_hashable(&value)?;
        let mut found = false;
        for candidate in partition_by {
            if go_equal(Some(candidate), Some(&value))? {
                found = true;
                break;
            }
        }
        if found {
            present.push(value);
        } else {
            rest.push(value);
        }
    }
    Ok((present, rest))
}

/// `partitionMapsByPresentInList`: by merge key value.
pub(super) fn partition_maps(
    list: Vec<Value>,
    partition_by: &[Value],
    merge_key: &str,
) -> Result<(Vec<Value>, Vec<Value>)> {
    let (mut present, mut rest) = (Vec::new(), Vec::new());
    for value in list {
        let Some(map) = value.as_object() else {
            return Err(bad_arg_type(GO_MAP_TYPE, Some(&value)));
        };
        let Some(merge_value) = map.get(merge_key) else {
            return Err(no_merge_key(&value, merge_key));
        };
        if find_map_in_slice(partition_by, merge_key, merge_value)?.is_some() {
            present.push(value);
        } else {
            rest.push(value);
        }
    }
    Ok((present, rest))
}

/// `normalizeElementOrder`: patch items in patch order, server-only items in
/// server order, then interleaved by the server order.
pub(super) fn normalize_element_order(
    patch: Vec<Value>,
    server_only: Vec<Value>,
    patch_order: &[Value],
    server_order: &[Value],
    merge_key: &str,
    is_map: bool,
) -> Result<Vec<Value>> {
    let patch = normalize_slice_order(patch, patch_order, merge_key, is_map)?;
    let server_only = normalize_slice_order(server_only, server_order, merge_key, is_map)?;
    merge_sorted_slice(server_only, patch, server_order, merge_key, is_map)
}

/// `normalizeSliceOrder`: stable sort by position in `order` (with upstream's
/// comparator and Go's `sort.SliceStable`), `$patch: delete` elements last.
pub(super) fn normalize_slice_order(
    to_sort: Vec<Value>,
    order: &[Value],
    merge_key: &str,
    is_map: bool,
) -> Result<Vec<Value>> {
    let (to_sort, to_delete) = if is_map {
        validate_merge_key_in_lists(merge_key, &[&to_sort, order])?;
        extract_to_delete_items(to_sort)?
    } else {
        (to_sort, Vec::new())
    };
    let mut sorted = if to_sort.len() < 2 {
        to_sort
    } else {
        let mut keyed = Vec::with_capacity(to_sort.len());
        for value in to_sort {
            keyed.push((index_in(order, &value, merge_key, is_map)?, value));
        }
        go::sort::slice_stable(
            &mut keyed,
            &|left: &(isize, Value), right: &(isize, Value)| {
                if left.0 >= 0 && right.0 >= 0 {
                    left.0 < right.0
                } else {
                    true
                }
            },
        );
        keyed.into_iter().map(|(_, value)| value).collect()
    };
    sorted.extend(to_delete);
    Ok(sorted)
}

/// `mergeSortedSlice`: insert the server-only items (`left`) into the patch items (`right`).
pub(super) fn merge_sorted_slice(
    mut left: Vec<Value>,
    mut right: Vec<Value>,
    server_order: &[Value],
    merge_key: &str,
    is_map: bool,
) -> Result<Vec<Value>> {
    let mut merged = Vec::with_capacity(left.len() + right.len());
    let (mut i, mut j) = (0, 0);
    while i < left.len() || j < right.len() {
        let take_left = if i >= left.len() {
            false
        } else if j >= right.len() {
            true
        } else {
            let left_index = index_in(server_order, &left[i], merge_key, is_map)?;
            let right_index = index_in(server_order, &right[j], merge_key, is_map)?;
            left_index >= 0 && right_index >= 0 && left_index < right_index
        };
        if take_left {
            merged.push(std::mem::take(&mut left[i]));
            i += 1;
        } else {
            merged.push(std::mem::take(&mut right[j]));
            j += 1;
        }
    }
    Ok(merged)
}

/// `index`: position of `value` in `list` (by merge key value for maps), or -1.
pub(super) fn index_in(
    list: &[Value],
    value: &Value,
    merge_key: &str,
    is_map: bool,
) -> Result<isize> {
    pub(super) fn key_of<'v>(item: &'v Value, merge_key: &str, is_map: bool) -> Option<&'v Value> {
        if is_map {
            item.as_object().and_then(|map| map.get(merge_key))
        } else {
            Some(item)
        }
    }
    let wanted = key_of(value, merge_key, is_map);
    for (position, item) in list.iter().enumerate() {
        if go_equal(wanted, key_of(item, merge_key, is_map))? {
            return Ok(position as isize);
        }
    }
    Ok(-1)
}

/// `validateMergeKeyInLists`.
pub(super) fn validate_merge_key_in_lists(merge_key: &str, lists: &[&[Value]]) -> Result<()> {
    for item in lists.iter().flat_map(|list| list.iter()) {
        let Some(map) = item.as_object() else {
            return Err(bad_arg_type(GO_MAP_TYPE, Some(item)));
        };
        if !map.contains_key(merge_key) {
            return Err(no_merge_key(item, merge_key));
        }
    }
    Ok(())
}

/// `extractToDeleteItems`: (kept, `$patch: delete` elements).
pub(super) fn extract_to_delete_items(list: Vec<Value>) -> Result<(Vec<Value>, Vec<Value>)> {
    let (mut keep, mut delete) = (Vec::new(), Vec::new());
    for item in list {
        let Some(map) = item.as_object() else {
            return Err(bad_arg_type(GO_MAP_TYPE, Some(&item)));
        };
        if map.get(DIRECTIVE_MARKER).and_then(Value::as_str) == Some(DELETE_DIRECTIVE) {
            delete.push(item);
        } else {
            keep.push(item);
        }
    }
    Ok((keep, delete))
}
