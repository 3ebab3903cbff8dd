<?php

declare(strict_types=1);

namespace Pagamentos\Resource;

use Pagamentos\Internal\Fields;

/**
 * What the buyer must do before a `requires_action` card payment is decided (3-D Secure): send
 * them to `url` (a redirect, e.g. `header('Location: ' . $action->url, true, 303)`). They come
 * back to the payment's `returnUrl`, with `paymentId` and `status` added to its query: read the
 * payment there (PaymentService::retrieveReturned), never trust the query's status.
 */
final class NextAction
{
    public const TYPE_REDIRECT = 'redirect';

    /** TYPE_REDIRECT (a string, so a type added later never breaks reading). */
    public readonly string $type;
    public readonly string $url;
    /** GET (a plain navigation) or POST (a form post). */
    public readonly string $method;
    /** The payment expires if the action is not completed by then. */
    public readonly \DateTimeImmutable $expiresAt;
    /** Where the buyer lands once done (the payment's returnUrl), or null: a page of ours. */
    public readonly ?string $returnUrl;

    /** @internal */
    public function __construct(Fields $f)
    {
        $this->type = $f->string('type');
        $this->url = $f->string('url');
        $this->method = $f->string('method');
        $this->expiresAt = $f->dateTime('expiresAt');
        $this->returnUrl = $f->nullableString('returnUrl');
    }
}
