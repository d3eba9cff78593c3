"""Project settings. The environment is read here, and only here (django-environ)."""
from __future__ import annotations

from pathlib import Path

import environ

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = BASE_DIR / "var"

DEV_SECRET_KEY = "dev-insecure-lifeproject-key-change-me-in-production-0123456789"

# The embedded default (bin/run) writes the local Radicale's address and
# generated password here; real environment variables always win.
if (VAR_DIR / "dev.env").exists():
    environ.Env.read_env(VAR_DIR / "dev.env")

env = environ.Env(
    DEBUG=(bool, True),
    SECRET_KEY=(str, DEV_SECRET_KEY),
    ALLOWED_HOSTS=(list, ["127.0.0.1", "localhost", "testserver"]),
    CALDAV_URL=(str, "http://127.0.0.1:5232/"),
    CALDAV_USERNAME=(str, "demo"),
    CALDAV_PASSWORD=(str, ""),
    CALDAV_TIMEOUT=(float, 10.0),
    RESOLVER_EVENT_HORIZON_DAYS=(int, 90),
    TYPESAFE_API_KEY=(str, ""),
    TYPESAFE_BASE_URL=(str, ""),
    TYPESAFE_DEFAULT_MODEL=(str, "jev-latest"),
    RESOLVER_JUDGMENT_BUDGET_SECONDS=(float, 8.0),
    RESOLVER_THRESHOLD_MARGIN=(float, 0.1),
    RESOLVER_PROVENANCE_TTL_SECONDS=(int, 900),
    # Where the clarification page is served; the command builds its links from it.
    RESOLVER_SITE_URL=(str, "http://127.0.0.1:8000"),
    RESOLVER_CLARIFICATION_MAX_AGE_SECONDS=(int, 900),
)

DEBUG = env("DEBUG")
SECRET_KEY = env("SECRET_KEY")
ALLOWED_HOSTS = env("ALLOWED_HOSTS")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "resolver",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "lifeproject.urls"
WSGI_APPLICATION = "lifeproject.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASES = {"default": env.db("DATABASE_URL", default=f"sqlite:///{VAR_DIR / 'db.sqlite3'}")}
CACHES = {"default": env.cache("CACHE_URL", default=f"filecache://{VAR_DIR / 'cache'}")}

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
LANGUAGE_CODE = "en"
TIME_ZONE = "UTC"
USE_TZ = True
STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "static"
LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/resolve/"

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_PARSER_CLASSES": ["rest_framework.parsers.JSONParser"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "EXCEPTION_HANDLER": "resolver.api.exceptions.envelope_exception_handler",
    "UNAUTHENTICATED_USER": None,
}

RESOLVER = {
    "CALDAV_URL": env("CALDAV_URL"),
    "CALDAV_USERNAME": env("CALDAV_USERNAME"),
    "CALDAV_PASSWORD": env("CALDAV_PASSWORD"),
    "CALDAV_TIMEOUT": env("CALDAV_TIMEOUT"),
    "EVENT_HORIZON_DAYS": env("RESOLVER_EVENT_HORIZON_DAYS"),
    "TYPESAFE_API_KEY": env("TYPESAFE_API_KEY"),
    "TYPESAFE_BASE_URL": env("TYPESAFE_BASE_URL"),
    "TYPESAFE_DEFAULT_MODEL": env("TYPESAFE_DEFAULT_MODEL"),
    "JUDGMENT_BUDGET_SECONDS": env("RESOLVER_JUDGMENT_BUDGET_SECONDS"),
    "THRESHOLD_MARGIN": env("RESOLVER_THRESHOLD_MARGIN"),
    "PROVENANCE_TTL_SECONDS": env("RESOLVER_PROVENANCE_TTL_SECONDS"),
    "SITE_URL": env("RESOLVER_SITE_URL"),
    "CLARIFICATION_MAX_AGE_SECONDS": env("RESOLVER_CLARIFICATION_MAX_AGE_SECONDS"),
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "loggers": {"resolver": {"handlers": ["console"], "level": "INFO"}},
}
