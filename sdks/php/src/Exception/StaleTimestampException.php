<?php

declare(strict_types=1);

namespace Pagamentos\Exception;

/**
 * The signature is valid but `webhook-timestamp` is further from now than the tolerance, in
 * the past (a replay?) or in the future (a clock out of step?).
 */
class StaleTimestampException extends WebhookVerificationException
{
    public function __construct(
        public readonly int $timestamp,
        public readonly int $now,
        public readonly int $toleranceSeconds,
    ) {
        $age = $now - $timestamp;
        parent::__construct($age > 0
            ? sprintf('The webhook-timestamp is %d s old, over the %d s tolerance: a replay?', $age, $toleranceSeconds)
            : sprintf(
                'The webhook-timestamp is %d s in the future, more than the %d s tolerance: is this clock right?',
                -$age,
                $toleranceSeconds,
            ));
    }
}
