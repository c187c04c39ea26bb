//! `k8s.io/apimachinery/pkg/util/errors`: how an aggregate of errors reads.

/// `utilerrors.NewAggregate(errs).Error()`: one message as it is, several
/// in brackets joined by `, `, a message repeated only once (kube's
/// `field.ErrorList.ToAggregate` drops repeats the same way).
pub fn aggregate(messages: &[String]) -> String {
    if let [only] = messages {
        return only.clone();
    }
    let mut seen: Vec<&str> = Vec::new();
    for message in messages {
        if !seen.contains(&message.as_str()) {
            seen.push(message);
        }
    }
    if let [only] = seen.as_slice() {
        return (*only).to_string();
    }
    format!("[{}]", seen.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_message_stands_alone_and_repeats_are_dropped() {
        let texts = |items: &[&str]| items.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(aggregate(&texts(&["a"])), "a");
        assert_eq!(aggregate(&texts(&["a", "a"])), "a");
        assert_eq!(aggregate(&texts(&["a", "b", "a"])), "[a, b]");
    }
}
