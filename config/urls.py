from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from accounts.apis import TokenApi

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/token/", TokenApi.as_view(), name="api_token"),
    path("api/schema/", SpectacularAPIView.as_view(), name="api_schema"),
    # The page's script is a separate same-origin file, as the Content-Security-Policy requires.
    path("api/docs/", SpectacularSwaggerSplitView.as_view(url_name="api_schema"), name="api_docs"),
    path("api/", include("config.api_urls")),
    path("", include("annotation.urls")),
    path("", include("accounts.urls")),
    path("", include("validation.adjudication_urls")),
    path("", include("judges.urls")),
    path("", include("validation.urls")),
]

# Concord's own pages for refused requests; the API keeps answering JSON (config/error_views.py).
handler400 = "config.error_views.bad_request"
handler403 = "config.error_views.permission_denied"
handler404 = "config.error_views.page_not_found"
