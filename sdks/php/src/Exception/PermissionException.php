<?php

declare(strict_types=1);

namespace Pagamentos\Exception;

/**
 * 403 PERMISSION_DENIED: the key may not do this (a publishable key on a server route,
 * live mode not activated yet, ...).
 */
class PermissionException extends ApiException
{
}
